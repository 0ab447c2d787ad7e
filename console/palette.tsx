/**
 * The command palette (Ctrl-K, ⌘-K, or the top bar's search): type to find flags in every project
 * the user sees (searchFeatures, as typed) and the console's pages; arrow keys move, Enter opens,
 * Escape closes. A combobox with its listbox (aria-activedescendant), so the input keeps the focus.
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import { CornerDownLeft, Flag as FlagIcon } from 'lucide'
import { enc, get, type Flag } from './api'
import { useModalDialog } from './components/dialog'
import { Icon, type IconNode } from './components/icon'
import { CONFIG_NAV, MAIN_NAV } from './nav'
import { go } from './ui'

interface Entry {
  id: string
  label: string
  detail: string
  path: string
  icon: IconNode
}

const LIMIT = 8

export function CommandPalette({ open, onClose, admin }: { open: boolean; onClose: () => void; admin: boolean }) {
  const input = useRef<HTMLInputElement>(null)
  const [query, setQuery] = useState('')
  // The flags found, with the text they answer: a list for an older text is never shown (nor opened).
  const [flags, setFlags] = useState<{ text: string; list: Flag[] }>({ text: '', list: [] })
  const [active, setActive] = useState(0)
  const [searching, setSearching] = useState(false)

  // Shown before the next key event: what a fast typist types after Ctrl-K lands in the input.
  const dialog = useModalDialog(open, onClose, () => {
    setQuery('')
    setActive(0)
    input.current?.focus()
  })

  useEffect(() => {
    if (!open) return
    const text = query.trim()
    // Flags as typed: a short pause, and an answer to an older text is dropped.
    let live = true
    setSearching(true)
    const timer = setTimeout(() => {
      get<{ features: Flag[] }>(`/api/admin/search/features?query=${enc(text)}&sortBy=name&limit=${LIMIT}`).then(
        answer => live && (setFlags({ text, list: answer.features }), setSearching(false)),
        () => live && (setFlags({ text, list: [] }), setSearching(false)),
      )
    }, 100)
    return () => {
      live = false
      clearTimeout(timer)
    }
  }, [query, open])

  const text = query.trim().toLowerCase()
  const pages: Entry[] = [...MAIN_NAV, ...CONFIG_NAV]
    .filter(item => (admin || !item.admin) && (text === '' || item.label.toLowerCase().includes(text)))
    .map(item => ({ id: `page-${item.path}`, label: item.label, detail: 'Page', path: item.path, icon: item.icon }))
  const found: Entry[] = (flags.text === query.trim() ? flags.list : []).map(flag => ({
    id: `flag-${flag.project}-${flag.name}`,
    label: flag.name,
    detail: `Flag in ${flag.project}`,
    path: `/projects/${enc(flag.project)}/features/${enc(flag.name)}`,
    icon: FlagIcon,
  }))
  const entries = [...found, ...pages]
  const at = Math.min(active, Math.max(0, entries.length - 1))

  const choose = (entry: Entry | undefined) => {
    if (!entry) return
    onClose()
    go(entry.path)
  }
  const keys = (event: KeyboardEvent) => {
    if (event.key === 'ArrowDown') setActive((at + 1) % Math.max(1, entries.length))
    else if (event.key === 'ArrowUp') setActive((at - 1 + entries.length) % Math.max(1, entries.length))
    else if (event.key === 'Home') setActive(0)
    else if (event.key === 'End') setActive(entries.length - 1)
    else if (event.key === 'Enter') choose(entries[at])
    else return
    event.preventDefault()
  }
  useEffect(() => {
    document.getElementById(`palette-${at}`)?.scrollIntoView({ block: 'nearest' })
  }, [at])

  const group = (title: string, list: Entry[], offset: number) =>
    list.length > 0 && (
      // biome-ignore lint/a11y/useSemanticElements: a group of options inside a listbox, which a fieldset cannot be
      <div role="group" aria-label={title}>
        <div class="palette-group" aria-hidden="true">
          {title}
        </div>
        {list.map((entry, index) => (
          // biome-ignore lint/a11y/useKeyWithClickEvents: the keyboard reaches options through the combobox (arrows, Enter)
          <div
            key={entry.id}
            id={`palette-${offset + index}`}
            role="option"
            tabIndex={-1}
            aria-selected={offset + index === at}
            class="palette-option"
            onPointerMove={() => setActive(offset + index)}
            onClick={() => choose(entry)}
          >
            <Icon icon={entry.icon} />
            <span class="palette-label">{entry.label}</span>
            <span class="palette-detail">{entry.detail}</span>
            {offset + index === at && <Icon icon={CornerDownLeft} class="palette-enter" />}
          </div>
        ))}
      </div>
    )

  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: a click on the backdrop closes, as Escape does by keyboard
    <dialog {...dialog} class="palette" aria-label="Command palette">
      {open && (
        <div class="palette-box">
          <input
            ref={input}
            class="palette-input"
            role="combobox"
            aria-label="Find a flag or page"
            aria-expanded="true"
            aria-controls="palette-list"
            aria-autocomplete="list"
            aria-activedescendant={entries.length > 0 ? `palette-${at}` : undefined}
            placeholder="Find a flag or page…"
            autocomplete="off"
            spellcheck={false}
            value={query}
            onInput={event => (setQuery(event.currentTarget.value), setActive(0))}
            onKeyDown={keys}
          />
          <div id="palette-list" role="listbox" aria-label="Results" class="palette-list">
            {group('Flags', found, 0)}
            {group('Pages', pages, found.length)}
          </div>
          <p class="palette-status muted" aria-live="polite">
            {searching
              ? 'Searching…'
              : entries.length === 0
                ? `Nothing matches “${query}”.`
                : `${entries.length} results`}
          </p>
          <p class="palette-help muted">
            <kbd>↑</kbd> <kbd>↓</kbd> to move · <kbd>Enter</kbd> to open · <kbd>Esc</kbd> to close
          </p>
        </div>
      )}
    </dialog>
  )
}
