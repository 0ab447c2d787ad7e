/**
 * The console's figures, run by hand (npx bun bench/run.ts console [--runs 3]):
 * - sign-in: the time of one correct sign-in over HTTP next to one Bun.password.verify of the same
 *   hash in this process (same minutes), and the server's CPU (user + system, from /proc) for 100
 *   wrong passwords in a row for one user, next to 5 correct sign-ins;
 * - the console's assets, minified and gzipped (what a browser downloads);
 * - the project page with 10,000 flags in headless Chromium: from navigation to the first rows'
 *   switches painted, and filter-as-you-type (one character typed until the count changes).
 */
import { readFileSync } from 'node:fs'
import { chromium } from 'playwright-core'
import { fmt, median, removeDir, seedDataDir, startServer, table, tempDataDir } from './lib'

const runs = Number(process.argv[process.argv.indexOf('--runs') + 1] ?? 3) || 3
const PASSWORD = 'Bench-admin-pass-1'
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const TICKS = 100 // USER_HZ on Linux

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS
}

const login = (base: string, username: string, password: string) =>
  fetch(`${base}/auth/simple/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) })

interface Run {
  signInMs: number
  verifyMs: number
  wrongCpuMs: number
  rightCpuMs: number
  statuses: string
  firstRowsMs: number
  warmRowsMs: number
  filterMs: number
}

async function oneRun(): Promise<Run> {
  const dir = tempDataDir('bench-console-')
  seedDataDir(dir, { events: 1000, flags: 10_000 })
  const server = await startServer(dir, { UNLEASH_DEFAULT_ADMIN_PASSWORD: PASSWORD, LOG_LEVEL: 'warn' })
  try {
    const { base, pid } = server
    // Sign-in over HTTP, next to one verification here of a hash made with the same settings.
    const times: number[] = []
    for (let i = 0; i < 5; i++) {
      const started = performance.now()
      const response = await login(base, 'admin', PASSWORD)
      await response.text()
      times.push(performance.now() - started)
    }
    const hash = await Bun.password.hash(PASSWORD, { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 })
    const verifies: number[] = []
    for (let i = 0; i < 5; i++) {
      const started = performance.now()
      await Bun.password.verify(PASSWORD, hash)
      verifies.push(performance.now() - started)
    }
    const beforeRight = cpuMs(pid)
    for (let i = 0; i < 5; i++) await (await login(base, 'admin', PASSWORD)).text()
    const rightCpuMs = cpuMs(pid) - beforeRight
    // 100 wrong passwords in a row for one user (a second user, so admin can still sign in below).
    const statuses = new Map<number, number>()
    const beforeWrong = cpuMs(pid)
    for (let i = 0; i < 100; i++) {
      const response = await login(base, 'guessed', `Wrong-pass-${i}`)
      await response.text()
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
    }
    const wrongCpuMs = cpuMs(pid) - beforeWrong

    // The project page with 10,000 flags.
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] })
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await page.goto(`${base}/`)
    await page.getByLabel('Username').fill('admin')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Projects' }).waitFor()
    const navigated = performance.now()
    await page.goto(`${base}/#/projects/default`)
    await page.getByRole('switch', { name: 'flag-0 in development' }).waitFor()
    const firstRowsMs = performance.now() - navigated
    // Again: the second visit (the first after a start pays for the server's first search).
    await page.goto(`${base}/#/`)
    await page.getByRole('heading', { name: 'Projects' }).waitFor()
    const again = performance.now()
    await page.goto(`${base}/#/projects/default`)
    await page.getByRole('switch', { name: 'flag-0 in development' }).waitFor()
    const warmRowsMs = performance.now() - again
    const filter = page.getByLabel('Filter flags')
    const count = page.getByText(/of 10000 flags/)
    const typed = performance.now()
    await filter.press('7')
    await page.getByText(/^\d+ of 10000 flags/).filter({ hasNotText: '10000 of 10000' }).waitFor()
    const filterMs = performance.now() - typed
    await count.waitFor()
    await browser.close()
    return {
      signInMs: median(times),
      verifyMs: median(verifies),
      wrongCpuMs,
      rightCpuMs,
      statuses: [...statuses].map(([status, n]) => `${n}×${status}`).join(' '),
      firstRowsMs,
      warmRowsMs,
      filterMs,
    }
  } finally {
    await server.stop()
    removeDir(dir)
  }
}

const built = Bun.spawnSync([process.execPath, 'console/build.ts'], { cwd: `${import.meta.dir}/..` })
const files = JSON.parse(built.stdout.toString()) as { name: string; text: string }[]
const sizes = files.map((file) => {
  const bytes = new TextEncoder().encode(file.text)
  return { name: file.name, bytes: bytes.length, gzipped: Bun.gzipSync(bytes).length }
})
console.log(table(['asset', 'minified', 'gzipped'], [...sizes.map((s) => [s.name, `${fmt(s.bytes / 1024)} KiB`, `${fmt(s.gzipped / 1024)} KiB`]), ['total', `${fmt(sizes.reduce((n, s) => n + s.bytes, 0) / 1024)} KiB`, `${fmt(sizes.reduce((n, s) => n + s.gzipped, 0) / 1024)} KiB`]]))
console.log()

const results: Run[] = []
for (let i = 0; i < runs; i++) results.push(await oneRun())
const row = (label: string, values: string[], med: string) => [label, ...values, med]
const column = (pick: (run: Run) => number, digits = 0) => results.map((run) => fmt(pick(run), digits))
const med = (pick: (run: Run) => number, digits = 0) => fmt(median(results.map(pick)), digits)
console.log(
  table(['measure', ...results.map((_, i) => `run ${i + 1}`), 'median'], [
    row('sign-in over HTTP (ms)', column((r) => r.signInMs, 1), med((r) => r.signInMs, 1)),
    row('one Bun.password.verify here (ms)', column((r) => r.verifyMs, 1), med((r) => r.verifyMs, 1)),
    row('ratio sign-in / verify', column((r) => r.signInMs / r.verifyMs, 2), med((r) => r.signInMs / r.verifyMs, 2)),
    row('server CPU, 5 correct sign-ins (ms)', column((r) => r.rightCpuMs), med((r) => r.rightCpuMs)),
    row('server CPU, 100 wrong passwords in a row (ms)', column((r) => r.wrongCpuMs), med((r) => r.wrongCpuMs)),
    row('answers to the 100', results.map((r) => r.statuses), ''),
    row('10,000 flags: navigation to first rows, first list after start (ms)', column((r) => r.firstRowsMs), med((r) => r.firstRowsMs)),
    row('10,000 flags: navigation to first rows, second visit (ms)', column((r) => r.warmRowsMs), med((r) => r.warmRowsMs)),
    row('10,000 flags: one character typed to filtered (ms)', column((r) => r.filterMs), med((r) => r.filterMs)),
  ]),
)
