/** The console's pages as the navigation and the command palette list them. */
import {
  AppWindow,
  Flag,
  FlaskConical,
  FolderKanban,
  GitPullRequestArrow,
  KeyRound,
  Layers,
  Route,
  ScrollText,
  Tags,
  Users,
  UsersRound,
  Variable,
  Webhook,
} from 'lucide'
import type { IconNode } from './components/icon'

export interface NavItem {
  label: string
  /** The hash route, e.g. "/segments". */
  path: string
  icon: IconNode
  /** Shown to admins only (the API answers 403 to others). */
  admin?: boolean
}

export const MAIN_NAV: NavItem[] = [
  { label: 'Projects', path: '/', icon: FolderKanban },
  { label: 'Flags', path: '/flags', icon: Flag },
  { label: 'Segments', path: '/segments', icon: UsersRound },
  { label: 'Change requests', path: '/change-requests', icon: GitPullRequestArrow },
  { label: 'Event log', path: '/events', icon: ScrollText },
  { label: 'Applications', path: '/applications', icon: AppWindow },
  { label: 'Playground', path: '/playground', icon: FlaskConical },
]

export const CONFIG_NAV: NavItem[] = [
  { label: 'Context fields', path: '/context', icon: Variable },
  { label: 'Tag types', path: '/tag-types', icon: Tags },
  { label: 'Strategy types', path: '/strategy-types', icon: Route },
  { label: 'Environments', path: '/environments', icon: Layers },
  { label: 'API tokens', path: '/tokens', icon: KeyRound, admin: true },
  { label: 'Users', path: '/users', icon: Users, admin: true },
  { label: 'Integrations', path: '/integrations', icon: Webhook, admin: true },
]

/** The item a route belongs to: the longest path that starts it ("/projects/x" is Projects). */
export function activeItem(hash: string, items: NavItem[]): NavItem | undefined {
  if (hash.startsWith('/projects')) return items.find(item => item.path === '/')
  return items
    .filter(item => item.path !== '/' && hash.startsWith(item.path))
    .sort((a, b) => b.path.length - a.path.length)[0]
}
