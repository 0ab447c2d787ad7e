/**
 * Light and dark themes. Without a choice the console follows the system (prefers-color-scheme);
 * a choice made with the shell's toggle is remembered in localStorage. The theme in effect is always
 * on <html data-theme="light|dark">, which style.css reads (and charts can: `useTheme()`).
 */
import { useEffect, useState } from 'preact/hooks'

export type Theme = 'light' | 'dark'

const KEY = 'flagstore-theme'
const system = matchMedia('(prefers-color-scheme: dark)')
const listeners = new Set<(theme: Theme) => void>()

export function chosenTheme(): Theme | null {
  const stored = localStorage.getItem(KEY)
  return stored === 'light' || stored === 'dark' ? stored : null
}

export function currentTheme(): Theme {
  return chosenTheme() ?? (system.matches ? 'dark' : 'light')
}

function apply() {
  const theme = currentTheme()
  document.documentElement.dataset.theme = theme
  for (const listener of listeners) listener(theme)
}

/** Remembers `theme`; `null` forgets the choice and follows the system again. */
export function setTheme(theme: Theme | null) {
  if (theme) localStorage.setItem(KEY, theme)
  else localStorage.removeItem(KEY)
  apply()
}

system.addEventListener('change', apply)
apply()

/** The theme in effect, re-rendering when it changes. */
export function useTheme(): Theme {
  const [theme, set] = useState(currentTheme())
  useEffect(() => {
    listeners.add(set)
    return () => void listeners.delete(set)
  }, [])
  return theme
}
