/**
 * Runs the documentation as a reader would: the fenced blocks of a markdown file, in order.
 *
 * The conventions the files follow (test/system/readme.test.ts checks them):
 * - every fence names its language; a `sh` block is run, in one bash session per file, so exports
 *   and `cd` carry over from block to block, with curl failing on any HTTP error;
 * - a `sh` block that starts the service (a line ending in `npm start`, or `npm start &` to start
 *   several) runs in the background, and the session waits for `/ready` on every port it names
 *   (`PORT=…`), or on the session's port; a later such block stops the one before it first;
 * - `localhost:4242` is the session's free port, and `localhost:4243` … `localhost:4249` (also as
 *   `PORT=4243` …) further free ports of the session; other text the caller maps (such as a private
 *   PostgreSQL's `localhost:5432`) is replaced the same way;
 * - a `js` block whose first line is `// <file name>` is saved under that name where the session is;
 * - a block whose info string ends in `output` (```json output, ```text output) is what the `sh`
 *   block just before it prints: JSON is matched as a subset of the last JSON line printed
 *   (`"…"` matches any value), text line by line (`…` matches anything within a line);
 * - `<!-- not run: why -->` on the line before a `sh` block exempts it; it must still parse.
 */
import { spawn } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export type Block = {
  file: string
  line: number
  lang: string
  info: string
  code: string
  /** Why the block is not run, from `<!-- not run: … -->` just before it. */
  notRun?: string
  /** The sample output that follows this block. */
  output?: Block
}

const SHELL = new Set(['sh', 'bash', 'shell'])
export const isShell = (block: Block) => SHELL.has(block.lang)
export const startsService = (block: Block) => /(^|\s)npm start(\s*&)?\s*$/m.test(block.code.replace(/\s+#.*$/gm, ''))

/** The ports of the documentation (4242 … 4249) a text names, as `localhost:424N` or `PORT=424N`. */
export const documentedPorts = (text: string) => [
  ...new Set([...text.matchAll(/(?:localhost:|PORT=)(424[2-9])\b/g)].map(m => Number(m[1]))),
]
export const fileNameOf = (block: Block) => /^\/\/ ([\w.-]+\.m?js)\s*$/m.exec(block.code.split('\n')[0])?.[1]

export function blocksOf(file: string, text: string): Block[] {
  const lines = text.split('\n')
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i])
    if (!open) continue
    const info = open[1].trim()
    const start = i
    const body: string[] = []
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i])
    if (i >= lines.length) throw new Error(`${file}:${start + 1}: the fence is never closed`)
    let before = start - 1
    while (before >= 0 && lines[before].trim() === '') before--
    const notRun = /^<!-- not run: (.+) -->$/.exec(lines[before] ?? '')?.[1]
    const block: Block = {
      file,
      line: start + 1,
      lang: info.split(/\s+/)[0],
      info,
      code: body.join('\n') + '\n',
      notRun,
    }
    const previous = blocks.at(-1)
    const adjacent =
      previous && lines.slice(previous.line + previous.code.split('\n').length, start).every(l => l.trim() === '')
    if (/\boutput$/.test(info) && previous && isShell(previous) && adjacent) previous.output = block
    else blocks.push(block)
  }
  return blocks
}

/** `expected` holds for `actual`: objects by their listed keys, arrays element by element, "…" anything. */
export function matchesSample(expected: unknown, actual: unknown): boolean {
  if (expected === '…') return true
  if (Array.isArray(expected))
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((e, i) => matchesSample(e, actual[i]))
    )
  if (expected && typeof expected === 'object') {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual)) return false
    return Object.entries(expected).every(
      ([key, value]) => key in actual && matchesSample(value, (actual as Record<string, unknown>)[key]),
    )
  }
  return expected === actual
}

/** Where the printed output of `block` falls short of its sample, or undefined when it matches. */
export function sampleMismatch(block: Block, printed: string): string | undefined {
  const sample = block.output
  if (!sample) return undefined
  if (sample.lang === 'json') {
    const last = printed
      .split('\n')
      .map(l => l.trim())
      .filter(l => l.startsWith('{') || l.startsWith('['))
      .at(-1)
    let actual: unknown
    try {
      actual = JSON.parse(last ?? '')
    } catch {
      return `${sample.file}:${sample.line}: no JSON printed; got:\n${printed}`
    }
    return matchesSample(JSON.parse(sample.code), actual)
      ? undefined
      : `${sample.file}:${sample.line}: the sample does not match what was printed:\n${last}`
  }
  const printedLines = printed.split('\n')
  for (const line of sample.code.split('\n').filter(l => l.trim() !== '')) {
    const pattern = new RegExp(
      '^\\s*' +
        line
          .trim()
          .split('…')
          .map(part => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*') +
        '\\s*$',
    )
    if (!printedLines.some(l => pattern.test(l)))
      return `${sample.file}:${sample.line}: "${line.trim()}" was not printed; got:\n${printed}`
  }
  return undefined
}

export type SessionResult = {
  exitCode: number | null
  transcript: string
  outputs: string[]
  vars: Record<string, string>
}

/**
 * Runs the `sh` blocks of one file (the not-run ones left out) in one bash, in `cwd`. Every
 * `localhost:4242` becomes the session's port; the services it starts are listed in `pidFile`
 * (process groups) and left running for the caller to stop.
 */
export async function runSession(options: {
  blocks: Block[]
  cwd: string
  env: Record<string, string>
  port: number
  /** Free ports standing for 4243 … 4249 where the blocks name them. */
  ports?: Record<number, number>
  /** More text to replace in every block, e.g. a private PostgreSQL's address for `localhost:5432`. */
  replace?: [string, string][]
  pidFile: string
  serviceLog: string
  timeoutMs: number
}): Promise<SessionResult> {
  const { blocks, port } = options
  const ports: Record<number, number> = { ...options.ports, 4242: port }
  const local = (code: string) => {
    let text = code.replace(/(localhost:|PORT=)(424[2-9])\b/g, (_, prefix: string, documented: string) => {
      const real = ports[Number(documented)]
      if (real === undefined) throw new Error(`no port given for ${documented}`)
      return prefix === 'PORT=' ? `PORT=${real}` : `127.0.0.1:${real}`
    })
    for (const [from, to] of options.replace ?? []) text = text.replaceAll(from, to)
    return text
  }
  const script = [
    'set -euo pipefail',
    'exec 2>&1',
    'curl() { command curl --fail-with-body --show-error "$@"; echo; }',
    `__pids=${JSON.stringify(options.pidFile)}; __log=${JSON.stringify(options.serviceLog)}; __service=`,
    // The service a block started is stopped (and waited for) before another one starts.
    '__stop() { [ -z "$__service" ] && return 0; kill -TERM -- "-$__service" 2>/dev/null || true; while kill -0 -- "-$__service" 2>/dev/null; do sleep 0.1; done; __service=; }',
    `__ready() { for __i in $(seq 1 1200); do command curl -sf -o /dev/null "http://127.0.0.1:$1/ready" && return 0; kill -0 -- "-$__service" 2>/dev/null || break; sleep 0.2; done; echo "the service on port $1 did not get ready:"; cat "$__log"; return 1; }`,
  ]
  blocks.forEach((block, index) => {
    script.push(`echo "@@block ${index}@@"`)
    if (isShell(block) && startsService(block)) {
      // The group lives as long as any service it started (`wait`), so several can start in one block.
      const named = [...local(block.code).matchAll(/\bPORT=(\d+)\b/g)].map(m => m[1])
      const waits = (named.length > 0 ? [...new Set(named)] : [String(port)]).map(p => `__ready ${p}`)
      script.push(
        '__stop',
        'set -m',
        '{',
        local(block.code),
        'wait',
        '} >>"$__log" 2>&1 &',
        '__service=$!',
        'set +m',
        'echo "$__service" >>"$__pids"',
        ...waits,
      )
    } else if (isShell(block)) {
      script.push(local(block.code))
    } else {
      const name = fileNameOf(block)
      if (!name)
        throw new Error(
          `${block.file}:${block.line}: a ${block.lang} block in a session must start with "// <file name>"`,
        )
      script.push(`cat >${name} <<'__END_OF_FILE__'`, local(block.code) + '__END_OF_FILE__')
    }
  })
  script.push('echo "@@vars@@"', 'env')
  const scriptFile = join(options.cwd, `.session-${process.pid}-${Date.now()}.sh`)
  writeFileSync(scriptFile, script.join('\n') + '\n')

  const child = spawn('bash', [scriptFile], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let transcript = ''
  child.stdout.on('data', chunk => (transcript += chunk))
  child.stderr.on('data', chunk => (transcript += chunk))
  const timer = setTimeout(() => {
    transcript += `\n(killed after ${options.timeoutMs} ms)`
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {}
  }, options.timeoutMs)
  const exitCode = await new Promise<number | null>(resolve => child.on('close', code => resolve(code)))
  clearTimeout(timer)
  rmSync(scriptFile, { force: true })

  const [body, varsText = ''] = transcript.split('@@vars@@\n')
  const outputs = body.split(/^@@block \d+@@\n/m).slice(1)
  const vars = Object.fromEntries(
    varsText
      .split('\n')
      .filter(l => l.includes('='))
      .map(l => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  )
  return { exitCode, transcript, outputs, vars }
}

/** Stops every service the sessions started (each its own process group) and waits for them. */
export async function stopServices(pids: number[]): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(-pid, 'SIGTERM')
    } catch {}
  }
  for (const pid of pids) {
    for (let i = 0; i < 200; i++) {
      try {
        process.kill(-pid, 0)
      } catch {
        break
      }
      await new Promise(resolve => setTimeout(resolve, 50))
    }
  }
}
