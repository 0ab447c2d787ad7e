/**
 * The README and every page of docs/ work as printed, for a newcomer without a global Bun.
 *
 * The checkout's files are copied to a temp directory (no node_modules), and each markdown file's
 * shell blocks run there in order, in one bash per file, with a PATH that holds no `bun`: the
 * README's Quick start installs with `npm install` and starts the service, its "Connect an
 * application" creates the tokens with its own curl requests, installs `unleash-client` into a new
 * application and runs the Node SDK snippet, which must print the flag's state. The browser SDK
 * snippet then runs, with the frontend token the README made, in Node and in Chromium (when
 * installed). Services listen on free loopback ports (`localhost:4242` in the text becomes the
 * session's port) and are stopped at the end. The conventions (see markdown.ts) are checked too:
 * every fence has a language, a shell block not run says why and still parses, sample outputs
 * match, links and anchors resolve, and no command needs a global Bun.
 */
import { SSO_VARIABLES } from '../../src/features/sso/sso.env'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { spawn, spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { launchChromium, withChromium } from './chromium'
import { tempDir } from '../helpers/files'
import { freePort } from '../helpers/processes'
import { startPostgres, type PostgresCluster } from '../postgres-cluster'
import {
  blocksOf,
  documentedPorts,
  fileNameOf,
  isShell,
  runSession,
  sampleMismatch,
  stopServices,
  type Block,
} from './markdown'

const ROOT = join(import.meta.dir, '../..')
const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter(f => f.endsWith('.md'))
    .sort()
    .map(f => `docs/${f}`),
]
const pages = FILES.map(file => {
  const text = readFileSync(join(ROOT, file), 'utf8')
  return { file, text, blocks: blocksOf(file, text) }
})
const readme = pages[0]

const sandbox = tempDir('docs-')
const copy = join(sandbox.path, 'flagstore')
const pidFile = join(sandbox.path, 'services.pids')
/** What the README's session left: its exported variables, for the browser snippet. */
let readmeVars: Record<string, string> | undefined

// A newcomer's shell: no global Bun (every `bun` on PATH is left out), npm answering from its cache
// where it can, and none of the npm_* variables of the `npm test` that may be running this file.
const env: Record<string, string> = {
  PATH: (process.env.PATH ?? '/usr/bin:/bin')
    .split(':')
    .filter(dir => dir && !existsSync(join(dir, 'bun')))
    .join(':'),
  HOME: process.env.HOME ?? sandbox.path,
  LANG: 'C.UTF-8',
  HOST: '127.0.0.1',
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
}

beforeAll(() => {
  // The checkout as a clone has it (tracked and new files, not node_modules or ignored files).
  const listed = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
  expect(listed.status).toBe(0)
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(ROOT, file))) continue
    mkdirSync(dirname(join(copy, file)), { recursive: true })
    copyFileSync(join(ROOT, file), join(copy, file))
  }
})

/**
 * A page whose blocks name `postgres://…@localhost:5432/` gets a private PostgreSQL
 * (test/postgres-cluster.ts), one for the whole file, started when the first such page runs:
 * `localhost:5432` becomes its address, as `localhost:4242` becomes the session's port.
 */
const POSTGRES_ADDRESS = '@localhost:5432/'
let postgres: Promise<PostgresCluster> | undefined

/** The process groups of the services the sessions started, in order. */
const startedServices = () =>
  existsSync(pidFile) ? readFileSync(pidFile, 'utf8').split('\n').filter(Boolean).map(Number) : []
/** Those stopped already, when their page's test ended (their ids may have been reused since). */
const stoppedServices = new Set<number>()

afterAll(async () => {
  await stopServices(startedServices().filter(pid => !stoppedServices.has(pid)))
  await (await postgres?.catch(() => undefined))?.stop()
  sandbox.remove()
})

/** GitHub's anchor of a heading. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
const anchorsOf = (text: string) => new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map(m => slug(m[1])))

test('every fence names its language, and every sample output follows the shell block it shows', () => {
  const problems = pages.flatMap(({ blocks }) =>
    blocks.flatMap(block => [
      ...(block.lang === '' ? [`${block.file}:${block.line}: a fence without a language`] : []),
      ...(/\boutput$/.test(block.info)
        ? [`${block.file}:${block.line}: a sample output that does not follow a sh block`]
        : []),
      ...(!isShell(block) && fileNameOf(block) && block.notRun
        ? [`${block.file}:${block.line}: a file block cannot be left out`]
        : []),
    ]),
  )
  expect(problems).toEqual([])
})

test('a shell block that is not run says why, still parses, and names only files that exist', () => {
  const notRun = pages.flatMap(({ blocks }) => blocks.filter(block => isShell(block) && block.notRun))
  expect(notRun.length).toBeGreaterThan(0)
  const problems = notRun.flatMap(block => {
    const parsed = spawnSync('bash', ['-n'], { input: block.code, encoding: 'utf8' })
    const paths = [
      ...(block.code + ' ' + block.notRun).matchAll(/(?<![\w/.-])(?:bench|src|test|deploy)\/[\w./-]*\w/g),
    ].map(m => m[0])
    return [
      ...(parsed.status === 0 ? [] : [`${block.file}:${block.line}: ${parsed.stderr.trim()}`]),
      ...paths
        .filter(path => !existsSync(join(ROOT, path)))
        .map(path => `${block.file}:${block.line}: ${path} does not exist`),
    ]
  })
  expect(problems).toEqual([])
})

test('no command in the documentation needs a global Bun', () => {
  const bare = /(?<![\w/.-])(?<!npx )bun (?:bench\/|src\/|test\b|run\b|install\b|start\b)/
  const problems = pages.flatMap(({ file, text }) =>
    text
      .split('\n')
      .flatMap((line, i) => (bare.test(line) && !/global Bun/.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
  )
  expect(problems).toEqual([])
})

test('every relative link and anchor leads somewhere', () => {
  const problems = pages.flatMap(({ file, text }) =>
    [...text.matchAll(/\]\(([^)\s]+)\)/g)].flatMap(([, href]) => {
      if (/^[a-z]+:/.test(href)) return []
      const [path, anchor] = href.split('#')
      const target = path === '' ? file : normalize(join(dirname(file), path))
      if (!existsSync(join(ROOT, target))) return [`${file}: ${href}: no such file`]
      if (anchor && target.endsWith('.md') && !anchorsOf(readFileSync(join(ROOT, target), 'utf8')).has(anchor))
        return [`${file}: ${href}: no such heading`]
      return []
    }),
  )
  expect(problems).toEqual([])
})

test("the README's Configuration table lists exactly the settings src/config.ts reads", () => {
  const config = readFileSync(join(ROOT, 'src/config.ts'), 'utf8')
  const read = new Set([...config.matchAll(/env\.([A-Z][A-Z_]+)|\(env, '([A-Z][A-Z_]+)'/g)].map(m => m[1] ?? m[2]))
  // Single sign-on's, which config.ts reads through features/sso/sso.env.ts.
  for (const name of SSO_VARIABLES) read.add(name)
  const section = readme.text.slice(
    readme.text.indexOf('\n## Configuration\n'),
    readme.text.indexOf('\n## ', readme.text.indexOf('\n## Configuration\n') + 1),
  )
  // The formatter pads a table's cells to the column's width.
  const listed = new Set([...section.matchAll(/^\| `([A-Z][A-Z_]+)` +\|/gm)].map(m => m[1]))
  expect([...listed].sort()).toEqual([...read].sort())
})

test('the README links every page of docs/ from its Documentation section', () => {
  const section = readme.text.slice(
    readme.text.indexOf('\n## Documentation\n'),
    readme.text.indexOf('\n## ', readme.text.indexOf('\n## Documentation\n') + 1),
  )
  const unlinked = FILES.filter(file => file.startsWith('docs/') && !section.includes(`](${file})`))
  expect(unlinked).toEqual([])
})

test('the README covers the newcomer path: start, tokens, the Node SDK printing a flag, the browser SDK', () => {
  const shell = readme.blocks.filter(isShell)
  expect(shell.some(b => !b.notRun && /npm install/.test(b.code) && /npm start/.test(b.code))).toBe(true)
  expect(shell.some(b => /"type":"client"/.test(b.code))).toBe(true)
  expect(shell.some(b => /"type":"frontend"/.test(b.code))).toBe(true)
  expect(readme.blocks.some(b => fileNameOf(b) === 'app.mjs' && b.code.includes("from 'unleash-client'"))).toBe(true)
  // The Node SDK snippet's run is checked by its sample output, which the session compares.
  expect(shell.some(b => /^node app\.mjs/m.test(b.code) && b.output && /is on/.test(b.output.code))).toBe(true)
  expect(browserSnippet().code).toContain("'<frontend token>'")
})

for (const page of pages) {
  const runnable = page.blocks.filter(
    block => (isShell(block) && !block.notRun) || (!isShell(block) && fileNameOf(block)),
  )
  if (!runnable.some(isShell)) continue
  test(`${page.file}: every shell block runs and prints what the text shows`, async () => {
    const port = freePort()
    const text = runnable.map(block => block.code).join('\n')
    const ports = Object.fromEntries(
      documentedPorts(text)
        .filter(p => p !== 4242)
        .map(p => [p, freePort()]),
    )
    const replace: [string, string][] = []
    if (text.includes(POSTGRES_ADDRESS)) {
      const cluster = await (postgres ??= startPostgres())
      replace.push([POSTGRES_ADDRESS, `@127.0.0.1:${cluster.port}/`])
    }
    const startedBefore = startedServices().length
    const result = await runSession({
      blocks: runnable,
      cwd: copy,
      env: { ...env, PORT: String(port), DATA_DIR: join(sandbox.path, `data-${page.file.replace(/\W/g, '-')}`) },
      port,
      ports,
      replace,
      pidFile,
      serviceLog: join(sandbox.path, `service-${page.file.replace(/\W/g, '-')}.log`),
      timeoutMs: 280_000,
    })
    // The README's service stays for the browser snippet's tests; a page's other services are stopped now
    // rather than left idle (an idle service still spends CPU) until the file ends.
    if (page === readme) readmeVars = result.vars
    else {
      const started = startedServices().slice(startedBefore)
      await stopServices(started)
      for (const pid of started) stoppedServices.add(pid)
    }
    expect({ exitCode: result.exitCode, transcript: result.exitCode === 0 ? '' : result.transcript }).toEqual({
      exitCode: 0,
      transcript: '',
    })
    const mismatches = runnable.flatMap((block, i) => sampleMismatch(block, result.outputs[i] ?? '') ?? [])
    expect(mismatches).toEqual([])
    expect(runnable.filter(b => b.output).length).toBeGreaterThan(0)
  }, 300_000)
}

test('a plain npm start prints the generated admin secret as the README shows it', async () => {
  const banner = readme.blocks.filter(b => b.lang === 'text' && b.code.includes('admin API token created'))
  if (!existsSync(join(copy, 'node_modules')))
    throw new Error("the README's session (its npm install) has to run first, in this same file")
  expect(banner.length).toBe(1)
  const port = freePort()
  const data = join(sandbox.path, 'data-plain-start')
  const child = spawn('npm', ['start'], {
    cwd: copy,
    env: { ...env, PORT: String(port), DATA_DIR: data },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let printed = ''
  child.stderr.on('data', chunk => (printed += chunk))
  try {
    for (let i = 0; i < 1200 && !/={20,}\n/.test(printed.slice(printed.indexOf('admin API token created'))); i++)
      await Bun.sleep(50)
    const secret = /\*:\*\.[0-9a-f]{64}/.exec(printed)?.[0]
    expect(secret).toBeDefined()
    const answer = await fetch(`http://127.0.0.1:${port}/api/admin/projects`, { headers: { Authorization: secret! } })
    expect(answer.status).toBe(200)
    expect(sampleMismatch({ ...banner[0], output: banner[0] }, printed)).toBeUndefined()
  } finally {
    await stopServices([child.pid!])
  }
}, 90_000)

function browserSnippet(): Block {
  const snippets = readme.blocks.filter(b => b.lang === 'js' && b.code.includes("from 'unleash-proxy-client'"))
  expect(snippets.length).toBe(1)
  return snippets[0]
}

/** The README's browser snippet, pointed at the README session's service with the token it made. */
function browserCode(): string {
  const vars = readmeVars
  if (!vars?.FRONTEND_TOKEN || !vars.URL) throw new Error('the README session did not leave FRONTEND_TOKEN and URL')
  const code = browserSnippet().code
  expect(code.split("'<frontend token>'").length).toBe(2)
  return code
    .replace("'<frontend token>'", JSON.stringify(vars.FRONTEND_TOKEN))
    .replaceAll('http://localhost:4242', vars.URL)
}

test('the README browser SDK snippet runs in Node and reads the flag through the frontend API', async () => {
  const file = join(copy, 'browser-snippet.mjs')
  writeFileSync(file, browserCode())
  const child = spawn('node', [file], { cwd: copy, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let printed = ''
  const line = await new Promise<string>(resolve => {
    const timer = setTimeout(() => resolve(`(nothing within 60 s) ${printed}`), 60_000)
    const take = (chunk: Buffer) => {
      printed += chunk
      const found = /new-checkout is \w+/.exec(printed)
      if (found) {
        clearTimeout(timer)
        resolve(found[0])
      }
    }
    child.stdout.on('data', take)
    child.stderr.on('data', take)
  })
  child.kill('SIGTERM')
  expect(line).toBe('new-checkout is on')
}, 90_000)

withChromium.test(
  'the README browser SDK snippet runs in Chromium, from a page of another origin',
  async () => {
    const module = readFileSync(join(copy, 'node_modules/unleash-proxy-client/build/main.esm.js'))
    const page = `<!doctype html><script type="importmap">{"imports":{"unleash-proxy-client":"/unleash-proxy-client.js"}}</script>
<script type="module">\n${browserCode()}</script>`
    const web = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: request =>
        new URL(request.url).pathname === '/unleash-proxy-client.js'
          ? new Response(module, { headers: { 'content-type': 'text/javascript' } })
          : new Response(page, { headers: { 'content-type': 'text/html' } }),
    })
    const browser = await launchChromium()
    try {
      const tab = await browser.newPage()
      const said = new Promise<string>(resolve =>
        tab.on('console', message => /new-checkout is/.test(message.text()) && resolve(message.text())),
      )
      await tab.goto(`http://127.0.0.1:${web.port}/`)
      expect(await Promise.race([said, Bun.sleep(60_000).then(() => 'nothing within 60 s')])).toBe('new-checkout is on')
    } finally {
      await browser.close()
      web.stop(true)
    }
  },
  120_000,
)
