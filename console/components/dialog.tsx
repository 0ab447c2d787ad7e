/**
 * Modal dialogs on the browser's own <dialog> (showModal: the page behind is inert, focus stays
 * inside, Escape closes). `ConfirmDialog` asks before a destructive action, and for the ones that
 * cannot be taken back (a token, a project) asks for the name to be typed. `confirmFirst(options)`
 * is the same as a promise, for a button's handler, shown by the one <ConfirmHost /> of the shell.
 * Every modal of the console (these and the command palette) opens and closes through useModalDialog.
 */
import type { ComponentChildren } from 'preact'
import { useEffect, useId, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { X } from 'lucide'
import { Button } from './button'
import { Icon } from './icon'

/**
 * The props of a native modal <dialog> whose open state is `open`, and only `open`: after every
 * render the element is shown or closed to match it (`onShow` runs when it is shown), and the
 * browser's own ways out (Escape, a click on the backdrop, a close the page did not ask for) only
 * ask `onClose`. A `close` event counts only while the element is really closed and was shown by
 * the state: the one a close queued earlier may arrive after the dialog was shown again (input
 * events go first under load), and must not close it again.
 */
export function useModalDialog(open: boolean, onClose: () => void, onShow?: () => void) {
  const ref = useRef<HTMLDialogElement>(null)
  const shown = useRef(false)
  useLayoutEffect(() => {
    const dialog = ref.current
    if (!dialog) return
    shown.current = open
    if (open && !dialog.open) {
      dialog.showModal()
      onShow?.()
    } else if (!open && dialog.open) dialog.close()
  })
  return {
    ref,
    onCancel: (event: Event) => {
      event.preventDefault()
      onClose()
    },
    onClose: () => {
      if (ref.current?.open !== false || !shown.current) return
      shown.current = false
      onClose()
    },
    onClick: (event: MouseEvent) => event.target === ref.current && onClose(),
  }
}

export function Modal({
  open,
  title,
  onClose,
  children,
  footer,
  class: className,
}: {
  open: boolean
  title: string
  onClose: () => void
  children: ComponentChildren
  /** The dialog's buttons, at its foot. */
  footer?: ComponentChildren
  class?: string
}) {
  const dialog = useModalDialog(open, onClose)
  const titleId = useId()
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: a click on the backdrop closes, as Escape does by keyboard
    <dialog {...dialog} class={`modal${className ? ` ${className}` : ''}`} aria-labelledby={titleId}>
      {open && (
        <div class="modal-box">
          <header class="modal-head">
            <h2 id={titleId}>{title}</h2>
            <button type="button" class="btn btn-ghost btn-icon btn-sm" aria-label="Close" onClick={onClose}>
              <Icon icon={X} />
            </button>
          </header>
          <div class="modal-body">{children}</div>
          {footer && <footer class="modal-foot">{footer}</footer>}
        </div>
      )}
    </dialog>
  )
}

export interface ConfirmOptions {
  /** The question, e.g. "Delete token checkout-service?" */
  title: string
  /** What happens, in a sentence. */
  message?: ComponentChildren
  /** The confirming button's text, e.g. "Delete token". */
  confirmLabel: string
  /** When set, the button stays disabled until this exact text is typed. */
  typeToConfirm?: string
  /** A red confirming button (default true: confirmation is for destructive actions). */
  danger?: boolean
}

export function ConfirmDialog({
  open,
  onConfirm,
  onCancel,
  title,
  message,
  confirmLabel,
  typeToConfirm,
  danger = true,
}: ConfirmOptions & { open: boolean; onConfirm: () => void; onCancel: () => void }) {
  const [typed, setTyped] = useState('')
  const inputId = useId()
  useEffect(() => setTyped(''), [open])
  const ready = typeToConfirm === undefined || typed === typeToConfirm
  return (
    <Modal
      open={open}
      title={title}
      onClose={onCancel}
      class="confirm"
      footer={
        <>
          <Button onClick={onCancel}>Cancel</Button>
          <Button variant={danger ? 'danger' : 'primary'} disabled={!ready} onClick={() => ready && onConfirm()}>
            {confirmLabel}
          </Button>
        </>
      }
    >
      {message && <p>{message}</p>}
      {typeToConfirm !== undefined && (
        <form onSubmit={event => (event.preventDefault(), ready && onConfirm())}>
          <label class="field" for={inputId}>
            <span class="field-label">
              Type <strong class="mono">{typeToConfirm}</strong> to confirm
            </span>
          </label>
          <input
            id={inputId}
            class="input"
            autocomplete="off"
            spellcheck={false}
            value={typed}
            onInput={event => setTyped(event.currentTarget.value)}
          />
        </form>
      )}
    </Modal>
  )
}

let ask: (options: ConfirmOptions) => Promise<boolean> = async () => false

/** Asks first; true when confirmed. */
export const confirmFirst = (options: ConfirmOptions) => ask(options)

export function ConfirmHost() {
  const [pending, setPending] = useState<{ options: ConfirmOptions; resolve: (yes: boolean) => void } | null>(null)
  useEffect(() => {
    ask = options => new Promise(resolve => setPending({ options, resolve }))
  }, [])
  const finish = (yes: boolean) => {
    pending?.resolve(yes)
    setPending(null)
  }
  return (
    <ConfirmDialog
      {...(pending?.options ?? { title: '', confirmLabel: '' })}
      open={pending !== null}
      onConfirm={() => finish(true)}
      onCancel={() => finish(false)}
    />
  )
}
