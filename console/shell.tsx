/**
 * The app shell around every page once signed in: a sidebar with the navigation (a menu behind a
 * button on a phone), a top bar with the command palette's trigger, the theme toggle and the
 * signed-in user's menu, and the toasts and confirmation dialogs every page may raise.
 */
import type { ComponentChildren } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { ChevronDown, Flag, KeyRound, LogOut, Menu, Moon, Search, Sun, UserRound, X } from 'lucide'
import type { User } from './api'
import { ConfirmHost } from './components/dialog'
import { Icon } from './components/icon'
import { Toaster } from './components/toast'
import { activeItem, CONFIG_NAV, MAIN_NAV, type NavItem } from './nav'
import { CommandPalette } from './palette'
import { setTheme, useTheme } from './theme'

const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform)

function NavList({ items, current }: { items: NavItem[]; current: NavItem | undefined }) {
  return (
    <ul>
      {items.map(item => (
        <li key={item.path}>
          <a href={`#${item.path}`} aria-current={item === current ? 'page' : undefined}>
            <Icon icon={item.icon} />
            {item.label}
          </a>
        </li>
      ))}
    </ul>
  )
}

function UserMenu({ user, role, onSignOut }: { user: User; role: string; onSignOut: () => void }) {
  const [open, setOpen] = useState(false)
  const box = useRef<HTMLDivElement>(null)
  const name = user.username ?? user.email ?? user.name ?? 'user'
  useEffect(() => {
    if (!open) return
    const outside = (event: Event) => box.current?.contains(event.target as Node) || setOpen(false)
    const onEscape = (event: KeyboardEvent) => event.key === 'Escape' && setOpen(false)
    const close = () => setOpen(false)
    addEventListener('pointerdown', outside)
    addEventListener('keydown', onEscape)
    addEventListener('hashchange', close)
    return () => {
      removeEventListener('pointerdown', outside)
      removeEventListener('keydown', onEscape)
      removeEventListener('hashchange', close)
    }
  }, [open])
  return (
    <div class="user-menu" ref={box}>
      <button
        type="button"
        class="btn btn-ghost"
        aria-expanded={open}
        aria-controls="user-menu"
        aria-label={`Account: ${name}`}
        onClick={() => setOpen(!open)}
      >
        <span class="avatar">
          <Icon icon={UserRound} size={16} />
        </span>
        <span class="user-name">{name}</span>
        <Icon icon={ChevronDown} size={14} />
      </button>
      {open && (
        <div class="menu" id="user-menu">
          <p class="who">
            Signed in as <strong>{name}</strong> ({role})
          </p>
          {!user.isAPI && (
            <a href="#/password" class="menu-item">
              <Icon icon={KeyRound} />
              Change password
            </a>
          )}
          <button type="button" class="menu-item" onClick={onSignOut}>
            <Icon icon={LogOut} />
            Sign out
          </button>
        </div>
      )}
    </div>
  )
}

export function Shell({
  user,
  role,
  hash,
  onSignOut,
  children,
}: {
  user: User
  role: string
  hash: string
  onSignOut: () => void
  children: ComponentChildren
}) {
  const theme = useTheme()
  const [menuOpen, setMenuOpen] = useState(false)
  const [paletteOpen, setPaletteOpen] = useState(false)
  const admin = role === 'Admin'
  const config = CONFIG_NAV.filter(item => admin || !item.admin)
  const current = activeItem(hash, [...MAIN_NAV, ...config])
  useEffect(() => setMenuOpen(false), [hash])
  useEffect(() => {
    const keys = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'k') {
        event.preventDefault()
        setPaletteOpen(true)
      }
    }
    addEventListener('keydown', keys)
    return () => removeEventListener('keydown', keys)
  }, [])
  const next = theme === 'dark' ? 'light' : 'dark'
  return (
    <div class="shell">
      <aside class={`sidebar${menuOpen ? ' open' : ''}`} id="sidebar">
        <a class="brand" href="#/">
          <Icon icon={Flag} size={20} />
          flagstore
        </a>
        <nav aria-label="Main">
          <NavList items={MAIN_NAV} current={current} />
          <p class="nav-group" id="nav-config">
            Configuration
          </p>
          <NavList items={config} current={current} />
        </nav>
      </aside>
      <div class="shell-body">
        <header class="topbar">
          <button
            type="button"
            class="btn btn-ghost btn-icon menu-button"
            aria-label={menuOpen ? 'Close menu' : 'Menu'}
            aria-expanded={menuOpen}
            aria-controls="sidebar"
            onClick={() => setMenuOpen(!menuOpen)}
          >
            <Icon icon={menuOpen ? X : Menu} size={20} />
          </button>
          <button
            type="button"
            class="palette-trigger"
            aria-keyshortcuts="Control+K Meta+K"
            onClick={() => setPaletteOpen(true)}
          >
            <Icon icon={Search} />
            <span class="palette-trigger-text">Find a flag or page</span>
            <kbd>{isMac ? '⌘K' : 'Ctrl K'}</kbd>
          </button>
          <span class="topbar-gap" />
          <button
            type="button"
            class="btn btn-ghost btn-icon"
            aria-label={`Switch to ${next} theme`}
            title={`Switch to ${next} theme`}
            onClick={() => setTheme(next)}
          >
            <Icon icon={theme === 'dark' ? Sun : Moon} size={18} />
          </button>
          <UserMenu user={user} role={role} onSignOut={onSignOut} />
        </header>
        <div class="page">{children}</div>
      </div>
      <CommandPalette open={paletteOpen} onClose={() => setPaletteOpen(false)} admin={admin} />
      <Toaster />
      <ConfirmHost />
    </div>
  )
}
