/**
 * The shape of src/: its import graph has no cycles, between files or between folders, and no
 * source file grows past 400 lines, nor one in console/ or bench/. Folders are compared at the level that owns code: each
 * `src/<top>/` (http, storage, backup, workers…), each `src/features/<feature>/`, and the files
 * directly in `src/features/` (shared feature helpers) as one folder. Files directly in `src/` are
 * the composition (main.ts, server.ts, app.ts, services.ts, feature-list.ts) and shared leaves
 * (errors.ts, log.ts, config.ts).
 */
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { COLLECTIONS } from '../src/feature-list'

const SRC = resolve(import.meta.dir, '../src')

const MAX_LINES = 400

function sourceFiles(dir: string): string[] {
  const files: string[] = []
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) files.push(...sourceFiles(path))
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) files.push(path)
  }
  return files
}

const files = sourceFiles(SRC)
const byPath = new Set(files)

/** The src/ files a file imports (static and dynamic imports, `import type` and re-exports included). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const targets: string[] = []
  const pattern =
    /(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s*['"](\.[^'"]+)['"]|(?:import|require)\(\s*['"](\.[^'"]+)['"]\s*\)|new URL\(\s*['"](\.[^'"]+)['"]/g
  for (const match of text.matchAll(pattern)) {
    const specifier = match[1] ?? match[2] ?? match[3]
    const base = resolve(dirname(file), specifier)
    const found = [base, `${base}.ts`, join(base, 'index.ts')].find(candidate => byPath.has(candidate))
    if (found) targets.push(found)
  }
  return targets
}

const graph = new Map(files.map(file => [file, importsOf(file)]))
const rel = (file: string) => relative(SRC, file)

/** The folder a file belongs to, for the folder rule (see the top of this file). */
function folderOf(file: string): string | null {
  const parts = rel(file).split('/')
  if (parts.length === 1) return null
  if (parts[0] === 'features') return parts.length === 2 ? 'features' : `features/${parts[1]}`
  return parts[0]
}

/** Every cycle of `edges`, each reported once, as the path round it. */
function cycles(edges: Map<string, Set<string>>): string[][] {
  const found: string[][] = []
  const seen = new Set<string>()
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (node: string) => {
    state.set(node, 'open')
    stack.push(node)
    for (const next of edges.get(node) ?? []) {
      if (state.get(next) === 'open') {
        const cycle = stack.slice(stack.indexOf(next))
        const key = [...cycle].sort().join(' ')
        if (!seen.has(key)) {
          seen.add(key)
          found.push([...cycle, next])
        }
      } else if (!state.has(next)) visit(next)
    }
    stack.pop()
    state.set(node, 'done')
  }
  for (const node of edges.keys()) if (!state.has(node)) visit(node)
  return found
}

describe('the import graph of src/', () => {
  test('the parser sees the imports (the graph is not empty)', () => {
    expect(files.length).toBeGreaterThan(30)
    expect(graph.get(join(SRC, 'app.ts'))!.map(rel)).toContain('services.ts')
  })

  test('no file imports itself through other files', () => {
    const edges = new Map([...graph].map(([file, targets]) => [rel(file), new Set(targets.map(rel))]))
    expect(cycles(edges).map(cycle => cycle.join(' → '))).toEqual([])
  })

  test('no folder imports a folder that imports it back', () => {
    const edges = new Map<string, Set<string>>()
    const why = new Map<string, string>()
    for (const [file, targets] of graph) {
      const from = folderOf(file)
      if (from === null) continue
      for (const target of targets) {
        const to = folderOf(target)
        if (to === null || to === from) continue
        if (!edges.has(from)) edges.set(from, new Set())
        edges.get(from)!.add(to)
        why.set(`${from} ${to}`, `${rel(file)} → ${rel(target)}`)
      }
    }
    const described = cycles(edges).map(cycle =>
      cycle
        .slice(1)
        .map((to, i) => why.get(`${cycle[i]} ${to}`))
        .join('; '),
    )
    expect(described).toEqual([])
  })

  test('the layers point one way: storage and http import no feature, storage imports nothing from http', () => {
    const wrong: string[] = []
    for (const [file, targets] of graph) {
      const from = folderOf(file)
      for (const target of targets) {
        const to = folderOf(target) ?? ''
        const feature = to === 'features' || to.startsWith('features/')
        if ((from === 'storage' && (feature || to === 'http')) || (from === 'http' && feature))
          wrong.push(`${rel(file)} → ${rel(target)}`)
      }
    }
    expect(wrong).toEqual([])
  })

  test('the protocols at the edge share the evaluator, not each other: frontend and ofrep import no other SDK API', () => {
    // What both evaluate with (the compiled scopes, the evaluator, the context) is features/evaluation,
    // which knows no protocol; OFREP's event streams reach the streaming feature through a port
    // that services.ts wires (ofrep.controller.ts NoticeStreams).
    const protocols = ['features/frontend', 'features/ofrep', 'features/evaluation']
    const apis = ['features/frontend', 'features/ofrep', 'features/client', 'features/streaming']
    const wrong: string[] = []
    for (const [file, targets] of graph) {
      const from = folderOf(file)
      if (from === null || !protocols.includes(from)) continue
      for (const target of targets) {
        const to = folderOf(target)
        if (to !== null && to !== from && apis.includes(to)) wrong.push(`${rel(file)} → ${rel(target)}`)
      }
    }
    expect(wrong).toEqual([])
    const evaluator = files.filter(file => folderOf(file) === 'features/evaluation')
    expect(evaluator.length).toBeGreaterThan(5)
    // Its code (comments aside) names no protocol and writes none of their answers' members.
    const code = (file: string) => readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
    expect(evaluator.filter(file => /ofrep|toggles|"reason"/i.test(code(file))).map(rel)).toEqual([])
  })

  test('the commands other than serve load no HTTP code: main.ts loads server.ts only to serve', () => {
    // What `flagstore backup`, `restore`, `reset-password`, `healthcheck` or `--version` can load:
    // everything main.ts reaches, static and dynamic imports alike, but for server.ts. The store's
    // collections come from feature-list.ts, the storage side of the one list of features.
    const main = join(SRC, 'main.ts')
    const server = join(SRC, 'server.ts')
    expect(readFileSync(main, 'utf8')).toMatch(/await import\(['"]\.\/server['"]\)/)
    const reached = new Set<string>()
    const visit = (file: string) => {
      if (reached.has(file)) return
      reached.add(file)
      for (const target of graph.get(file) ?? []) if (!(file === main && target === server)) visit(target)
    }
    visit(main)
    const loaded = [...reached].map(rel)
    for (const needed of [
      'cli.ts',
      'open-store.ts',
      'feature-list.ts',
      'backup/backup.ts',
      'backup/postgres-backup.ts',
    ])
      expect(loaded).toContain(needed)
    const http = (file: string) =>
      folderOf(file) === 'http' ||
      file.endsWith('.controller.ts') ||
      ['app.ts', 'services.ts', 'server.ts'].includes(rel(file)) ||
      /\bfrom\s*['"](elysia|@elysiajs\/[^'"]+)['"]/.test(readFileSync(file, 'utf8'))
    expect([...reached].filter(http).map(rel)).toEqual([])
  })

  test('storage knows collections only as the definitions the features hand it', () => {
    expect(COLLECTIONS.map(definition => definition.name)).toEqual([
      'projects',
      'environments',
      'flags',
      'tokens',
      'segments',
      'segmentSequence',
      'strategyTypes',
      'tagTypes',
      'flagTypes',
      'contextFields',
      'flagUsage',
      'flagLastSeen',
      'clientApplications',
      'clientInstances',
      'users',
      'sessions',
      'addons',
      'addonSequence',
      'addonDeliveries',
      'addonStates',
      'addonAttempts',
      'personalTokens',
      'serviceAccounts',
      'ssoSettings',
      'ssoIdentities',
      'changeRequestSettings',
      'changeRequests',
      'changeRequestSequence',
    ])
    const named: string[] = []
    for (const file of files.filter(file => folderOf(file) === 'storage')) {
      const text = readFileSync(file, 'utf8')
      for (const { name } of COLLECTIONS)
        if (new RegExp(`['"\`]${name}['"\`]`).test(text)) named.push(`${rel(file)}: ${name}`)
    }
    expect(named).toEqual([])
  })
})

test(`no source file in src/, console/ or bench/ is over ${MAX_LINES} lines`, () => {
  const ROOT = resolve(SRC, '..')
  const all = ['src', 'console', 'bench'].flatMap(dir => sourceFiles(join(ROOT, dir)))
  expect(all.length).toBeGreaterThan(files.length)
  const long = all
    .map(file => ({ file: relative(ROOT, file), lines: readFileSync(file, 'utf8').split('\n').length }))
    .filter(({ lines }) => lines > MAX_LINES)
    .map(({ file, lines }) => `${file}: ${lines}`)
  expect(long).toEqual([])
})

const MAX_TEST_LINES = 600

test(`no file in test/ is over ${MAX_TEST_LINES} lines (a long one is split by concern)`, () => {
  const ROOT = resolve(SRC, '..')
  const all = sourceFiles(join(ROOT, 'test'))
  expect(all.length).toBeGreaterThan(100)
  const long = all
    .map(file => ({ file: relative(ROOT, file), lines: readFileSync(file, 'utf8').trimEnd().split('\n').length }))
    .filter(({ lines }) => lines > MAX_TEST_LINES)
    .map(({ file, lines }) => `${file}: ${lines}`)
  expect(long).toEqual([])
})

test('test/system imports the helper modules it uses, not the barrel that loads the service', () => {
  // test/helpers.ts brings api.ts, which loads the whole service (0.3-0.4 s of CPU): a file whose
  // services run as processes of their own does not pay for it. Files that build apps import api.ts.
  const ROOT = resolve(SRC, '..')
  const system = sourceFiles(join(ROOT, 'test/system'))
  expect(system.length).toBeGreaterThan(30)
  const barrel = system
    .filter(file => /\bfrom\s*['"]\.\.\/helpers['"]/.test(readFileSync(file, 'utf8')))
    .map(file => relative(ROOT, file))
  expect(barrel).toEqual([])
})

test(`no page of docs/ (nor the README) is over ${MAX_LINES} lines (a reference, not a journal)`, () => {
  const ROOT = resolve(SRC, '..')
  const pages = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter(name => name.endsWith('.md'))
      .map(name => `docs/${name}`),
  ]
  expect(pages.length).toBeGreaterThan(10)
  const long = pages
    .map(page => ({ page, lines: readFileSync(join(ROOT, page), 'utf8').trimEnd().split('\n').length }))
    .filter(({ lines }) => lines > MAX_LINES)
    .map(({ page, lines }) => `${page}: ${lines}`)
  expect(long).toEqual([])
})
