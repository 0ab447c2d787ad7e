/**
 * Small pieces every page uses: the error line, a hash-route hook, loading, formatting; and the
 * shared components (console/components/), re-exported so a page imports them from one place.
 */
import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { Plus } from 'lucide'
import { ApiError, call } from './api'
import { Button } from './components/button'

import { confirmFirst } from './components/dialog'
import { toast } from './components/toast'

export { Button, type ButtonProps, type ButtonVariant } from './components/button'
export { ConfirmDialog, confirmFirst, Modal, type ConfirmOptions } from './components/dialog'
export { EmptyState } from './components/empty-state'
export { Field, Picker, TextField, type Option } from './components/field'
export { Icon, type IconNode } from './components/icon'
export { Switch } from './components/switch'
export { messageOf, toast } from './components/toast'
export { FormPanel, split } from './components/form-panel'

/**
 * After a switch turned `flag` on or off in a production-type environment: a toast saying so, with
 * Undo (which runs `undo`), so a slip in production is one click to take back, without a question
 * before every change.
 */
export function announceProductionSwitch(
  flag: string,
  environment: { name: string; type?: string },
  enabled: boolean,
  undo: () => void,
) {
  if (environment.type !== 'production') return
  toast.info(`${flag} turned ${enabled ? 'on' : 'off'} in ${environment.name}, a production environment.`, {
    label: 'Undo',
    run: undo,
  })
}

/** An API error shown where the user acted, naming the field when the API names one. */
export function ErrorLine({ error, id }: { error: unknown; id?: string }) {
  if (!error) return null
  const message = error instanceof Error ? error.message : String(error)
  const field = error instanceof ApiError && error.field ? ` (${error.field})` : ''
  return (
    <p class="error" role="alert" id={id}>
      {message}
      {field}
    </p>
  )
}

export function useHash(): string {
  const [hash, setHash] = useState(location.hash.slice(1) || '/')
  useEffect(() => {
    const changed = () => setHash(location.hash.slice(1) || '/')
    addEventListener('hashchange', changed)
    return () => removeEventListener('hashchange', changed)
  }, [])
  return hash
}

export const go = (path: string) => (location.hash = path)

export function when(value: string | null | undefined): string {
  return value ? new Date(value).toLocaleString() : '—'
}

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section aria-label={title}>
      <h2>{title}</h2>
      {children}
    </section>
  )
}

/** Loads once per `key`; `reload` loads again. */
export function useLoad<T>(
  load: () => Promise<T>,
  key: unknown[],
): { data: T | undefined; error: unknown; reload: () => void; set: (value: T) => void } {
  const [data, setData] = useState<T | undefined>(undefined)
  const [error, setError] = useState<unknown>(null)
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let live = true
    load().then(
      value => live && (setData(value), setError(null)),
      failure => live && setError(failure),
    )
    return () => {
      live = false
    }
  }, [...key, tick])
  return { data, error, reload: () => setTick(n => n + 1), set: setData }
}

/** Runs an API call for a page: clears or shows its error, reloads what it shows when it worked. */
export function useAct(reload: () => void) {
  const [error, setError] = useState<unknown>(null)
  const act = async (work: () => Promise<unknown>): Promise<boolean> => {
    try {
      await work()
      setError(null)
      reload()
      return true
    } catch (failure) {
      setError(failure)
      return false
    }
  }
  return { error, act }
}

/**
 * Deleting the `kind` named `name` (DELETE `path`), asked first (ConfirmDialog, saying `message`):
 * once confirmed, a toast says it is deleted, or gives the server's message when it refuses. True
 * when it was done.
 */
export async function confirmDelete(kind: string, name: string, path: string, message: string) {
  if (!(await confirmFirst({ title: `Delete ${kind} ${name}?`, message, confirmLabel: `Delete ${kind}` }))) return false
  try {
    await call('DELETE', path)
    toast.success(`${kind[0].toUpperCase()}${kind.slice(1)} ${name} deleted.`)
    return true
  } catch (failure) {
    toast.error(failure)
    return false
  }
}

/** A list page's heading, with its "New …" button for those who may write while no form is open. */
export function ListHead({
  title,
  newLabel,
  show,
  onNew,
}: {
  title: string
  newLabel: string
  show: boolean
  onNew: () => void
}) {
  return (
    <div class="page-head">
      <h1>{title}</h1>
      {show && (
        <Button variant="primary" icon={Plus} onClick={onNew}>
          {newLabel}
        </Button>
      )}
    </div>
  )
}

/** A table's box that scrolls sideways on a phone: a named region the keyboard can reach and scroll. */
export function TableWrap({
  label,
  hidden,
  children,
}: {
  label: string
  hidden?: boolean
  children: ComponentChildren
}) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a region that scrolls sideways must take the focus to scroll by keyboard
    <section class="table-wrap" tabIndex={0} aria-label={label} hidden={hidden}>
      {children}
    </section>
  )
}
