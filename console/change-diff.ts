/**
 * What a change of a change request does to the flag as it is now: a short summary and the part of
 * the flag it touches before and after, for the field-by-field diff the event log also shows.
 */
import type { Flag, Strategy } from './api'

export interface ChangeView {
  summary: string
  before: unknown
  after: unknown
}

type Payload = Record<string, unknown>

/** The fields of a strategy a change may touch, in a steady order. */
const strategyFields = (strategy: Partial<Strategy> | undefined) =>
  strategy && {
    name: strategy.name,
    title: strategy.title ?? undefined,
    disabled: strategy.disabled ?? undefined,
    parameters: strategy.parameters ?? {},
    constraints: strategy.constraints ?? [],
    segments: strategy.segments ?? [],
    variants: strategy.variants ?? [],
  }

const onOff = (enabled: unknown) => (enabled ? 'on' : 'off')

/** The summary, before and after of `action` with `payload` in `environment` of `flag` (undefined while it loads). */
export function changeView(action: string, payload: unknown, flag: Flag | undefined, environment: string): ChangeView {
  const body = (payload ?? {}) as Payload
  const entry = flag?.environments.find(e => e.name === environment)
  const strategies = entry?.strategies ?? []
  const strategy = strategies.find(s => s.id === body.id)
  const dependencies = flag?.dependencies ?? []
  switch (action) {
    case 'updateEnabled':
      return {
        summary: `Turn ${onOff(body.enabled)}: ${onOff(entry?.enabled)} → ${onOff(body.enabled)}`,
        before: { enabled: entry?.enabled ?? false },
        after: { enabled: body.enabled },
      }
    case 'addStrategy':
      return {
        summary: `Add strategy ${body.name}`,
        before: undefined,
        after: strategyFields(body as Partial<Strategy>),
      }
    case 'updateStrategy':
      return {
        summary: `Update strategy ${strategy?.name ?? body.name}`,
        before: strategyFields(strategy),
        after: strategyFields(body as Partial<Strategy>),
      }
    case 'deleteStrategy':
      return {
        summary: `Delete strategy ${strategy?.name ?? body.id}`,
        before: strategyFields(strategy),
        after: undefined,
      }
    case 'reorderStrategy': {
      const order = new Map((payload as { id: string; sortOrder: number }[]).map(item => [item.id, item.sortOrder]))
      const sorted = [...strategies].sort(
        (a, b) => (order.get(a.id ?? '') ?? Infinity) - (order.get(b.id ?? '') ?? Infinity),
      )
      const names = (list: Strategy[]) => list.map(s => s.title || s.name)
      return { summary: 'Reorder strategies', before: { order: names(strategies) }, after: { order: names(sorted) } }
    }
    case 'patchVariant':
      return {
        summary: 'Set variants',
        before: { variants: entry?.variants ?? [] },
        after: { variants: body.variants },
      }
    case 'archiveFeature':
      return { summary: 'Archive the flag', before: { archived: flag?.archived ?? false }, after: { archived: true } }
    case 'addDependency': {
      const added = { feature: body.feature, enabled: body.enabled ?? true, variants: body.variants ?? [] }
      const kept = dependencies.filter(d => d.feature !== body.feature)
      return {
        summary: `Depend on ${body.feature}`,
        before: { dependencies },
        after: { dependencies: [...kept, added] },
      }
    }
    case 'deleteDependency':
      return {
        summary: `Stop depending on ${body.feature}`,
        before: { dependencies },
        after: { dependencies: dependencies.filter(d => d.feature !== body.feature) },
      }
    default:
      return { summary: action, before: undefined, after: body }
  }
}
