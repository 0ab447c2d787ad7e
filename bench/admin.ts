/**
 * Admin paths: the HTTP hot paths next to a bare Bun server (`admin`) and the console: sign-in, its
 * assets and the project page of 10,000 flags in Chromium (`console`), a toggle in the console until
 * the SDKs see it (`console-propagation`). Run through bench/run.ts.
 */
import { chromium } from 'playwright-core'
import type { Unleash } from 'unleash-client'
import {
  bareServer,
  authHeaders,
  cannon,
  cpuSeconds,
  createToken,
  errorsOf,
  fmt,
  fmtMedian,
  type Load,
  loadAverage,
  loadColumns,
  median,
  options,
  removeDir,
  repeat,
  SECRET,
  seedDataDir,
  spread,
  startServer,
  table,
  tempDataDir,
  withDataDir,
  withServer,
  wrk,
} from './lib'
import { holds, officialSdk } from './sdk'

/**
 * `admin`, HTTP hot paths:
 * - project feature list, 1,000 flags in 3 environments: wrk (autocannon's single thread is the
 *   limit for responses this large), next to a bare Bun server returning the same bytes;
 * - POST /api/admin/features/validate and GET /health: autocannon, next to the bare server;
 * - bulk off of 1,000 flags: sequential requests (each after a bulk on), p50 and p99.
 * Prints a table of requests/s, p50, p99 and the ratio to the bare-Bun ceiling, medians of runs.
 */
export async function adminPaths() {
  const { runs: RUNS, seconds: SECONDS } = options({ runs: 3, seconds: 10 })

  /** `load` of the service, then of a bare Bun server answering `bytes`. */
  async function beside(bytes: Uint8Array | string, load: (url: string | null) => Promise<Load>) {
    const served = await load(null)
    const bare = await bareServer(bytes)
    const ceiling = await load(bare.url)
    await bare.stop()
    return [served, ceiling]
  }

  const run = (dir: string) =>
    withServer(dir, {}, async server => {
      const listUrl = `${server.base}/api/admin/projects/default/features`
      const listBytes = new Uint8Array(await (await fetch(listUrl, { headers: authHeaders })).arrayBuffer())
      const [list, listCeiling] = await beside(listBytes, url =>
        wrk(url ?? listUrl, url ? {} : { authorization: SECRET }, SECONDS),
      )
      const [url, body] = [`${server.base}/api/admin/features/validate`, JSON.stringify({ name: 'a-free-name' })]
      const validate = await cannon({ url, method: 'POST', headers: authHeaders, body, duration: SECONDS })
      const healthBytes = '{"health":"GOOD"}'
      const [health, healthCeiling] = await beside(healthBytes, url =>
        cannon({ url: url ?? `${server.base}/health`, duration: SECONDS }),
      )

      const features = Array.from({ length: 1000 }, (_, i) => `flag-${i}`)
      const bulk = async (state: 'on' | 'off') => {
        const path = `/api/admin/projects/default/bulk_features/environments/production/${state}`
        const body = JSON.stringify({ features })
        const response = await fetch(server.base + path, { method: 'POST', headers: authHeaders, body })
        await response.arrayBuffer()
        if (response.status !== 200) throw new Error(`bulk ${state} answered ${response.status}`)
      }
      const offTimes: number[] = []
      for (let i = 0; i < 25; i++) {
        await bulk('on')
        const started = performance.now()
        await bulk('off')
        if (i >= 5) offTimes.push(performance.now() - started)
      }
      const bulkOff = spread(offTimes)
      return { list, listCeiling, listBytes: listBytes.length, validate, health, healthCeiling, bulkOff }
    })

  const seed = { events: 1000, flags: 1000, environments: ['development', 'staging', 'production'] }
  const runs = await withDataDir(seed, dir => repeat(RUNS, () => run(dir)))
  type Run = (typeof runs)[number]
  const row = (name: string, pick: (r: Run) => [Load, Load], target: string) => [
    name,
    ...loadColumns(runs, pick),
    errorsOf(runs, pick),
    target,
  ]
  const bulkOff = [`${fmtMedian(runs, 2, r => r.bulkOff.p50)} ms`, `${fmtMedian(runs, 2, r => r.bulkOff.p99)} ms`]
  console.log(`\nProject list: ${fmt(runs[0].listBytes / 1024, 0)} KiB per answer.\n`)
  console.log(
    table(
      ['scenario', 'requests/s', 'p50', 'p99', 'bare Bun requests/s', 'ratio', 'errors', 'target'],
      [
        row('project feature list, 1,000 flags × 3 environments (wrk)', r => [r.list, r.listCeiling], 'ratio ≥ 0.5'),
        row('POST /api/admin/features/validate (autocannon)', r => [r.validate, r.healthCeiling], '≥ 15,000/s'),
        row('GET /health (autocannon)', r => [r.health, r.healthCeiling], ''),
        ['bulk off of 1,000 flags, sequential', '', ...bulkOff, '', '', '0', 'p50 ≤ 50 ms'],
      ],
    ),
  )
}

/** The console user both scenarios start their server with. */
const PASSWORD = 'Bench-admin-pass-1'

/** Headless Chromium (CHROMIUM_PATH, or Debian's) with a page signed in to the console as that user. */
async function signedIn(base: string) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  })
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  await page.goto(`${base}/`)
  await page.getByLabel('Username').fill('admin')
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Projects' }).waitFor()
  return { browser, page }
}

/**
 * `console`, the console's figures:
 * - sign-in: the time of one correct sign-in over HTTP next to one Bun.password.verify of the same
 *   hash in this process (same minutes), and the server's CPU (user + system, from /proc) for 100
 *   wrong passwords in a row for one user, next to 5 correct sign-ins;
 * - the console's assets, minified and gzipped (what a browser downloads);
 * - the project page with 10,000 flags in headless Chromium: from navigation to the first rows'
 *   switches painted, and filter-as-you-type (one character typed until the count changes).
 */
export async function consolePage() {
  const { runs } = options({ runs: 3 })
  const cpuMs = (pid: number) => cpuSeconds(pid) * 1000

  const login = (base: string, username: string, password: string) =>
    fetch(`${base}/auth/simple/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
    })

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
      const { browser, page } = await signedIn(base)
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
      await page
        .getByText(/^\d+ of 10000 flags/)
        .filter({ hasNotText: '10000 of 10000' })
        .waitFor()
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
  const sizes = files.map(file => {
    const bytes = new TextEncoder().encode(file.text)
    return { name: file.name, bytes: bytes.length, gzipped: Bun.gzipSync(bytes).length }
  })
  console.log(
    table(
      ['asset', 'minified', 'gzipped'],
      [
        ...sizes.map(s => [s.name, `${fmt(s.bytes / 1024)} KiB`, `${fmt(s.gzipped / 1024)} KiB`]),
        [
          'total',
          `${fmt(sizes.reduce((n, s) => n + s.bytes, 0) / 1024)} KiB`,
          `${fmt(sizes.reduce((n, s) => n + s.gzipped, 0) / 1024)} KiB`,
        ],
      ],
    ),
  )
  console.log()

  const results: Run[] = []
  for (let i = 0; i < runs; i++) results.push(await oneRun())
  const measures: [string, (run: Run) => number, number][] = [
    ['sign-in over HTTP (ms)', r => r.signInMs, 1],
    ['one Bun.password.verify here (ms)', r => r.verifyMs, 1],
    ['ratio sign-in / verify', r => r.signInMs / r.verifyMs, 2],
    ['server CPU, 5 correct sign-ins (ms)', r => r.rightCpuMs, 0],
    ['server CPU, 100 wrong passwords in a row (ms)', r => r.wrongCpuMs, 0],
    ['10,000 flags: navigation to first rows, first list after start (ms)', r => r.firstRowsMs, 0],
    ['10,000 flags: navigation to first rows, second visit (ms)', r => r.warmRowsMs, 0],
    ['10,000 flags: one character typed to filtered (ms)', r => r.filterMs, 0],
  ]
  const rows = measures.map(([label, pick, digits]) => [
    label,
    ...results.map(run => fmt(pick(run), digits)),
    fmt(median(results.map(pick)), digits),
  ])
  rows.splice(5, 0, ['answers to the 100', ...results.map(r => r.statuses), ''])
  console.log(table(['measure', ...results.map((_, i) => `run ${i + 1}`), 'median'], rows))
}

/**
 * `console-propagation`: from a toggle in the console to the SDKs:
 * One server (100 flags), headless Chromium signed in to the console on the project page, and in
 * this process two official `unleash-client` SDKs with a client token for development: one
 * polling every `--interval` ms, one streaming (experimentalMode streaming). For each of
 * `--toggles` clicks on the switch "flag-0 in development", timed from the click:
 * - the console's answer (the toggle's response seen by the page);
 * - a poll made the moment the page has its answer (GET /api/client/features with the client
 *   token, as the SDK's next poll would be): whether it already holds the change, and when;
 * - the streaming SDK's copy showing the change;
 * - the polling SDK's copy showing it, and whether that was its first poll after the answer.
 * Prints p50/p99/max of each with the load average.
 */
export async function consolePropagation() {
  const { toggles: TOGGLES, interval: INTERVAL } = options({ toggles: 20, interval: 1000 })
  const FLAG = 'flag-0'
  const POLL_MS = 20

  const dir = tempDataDir('bench-propagation-')
  seedDataDir(dir, { events: 100, flags: 100 })
  const server = await startServer(dir, { UNLEASH_DEFAULT_ADMIN_PASSWORD: PASSWORD, LOG_LEVEL: 'warn' })
  const { base } = server
  const clients: Unleash[] = []
  let browser: Awaited<ReturnType<typeof signedIn>>['browser'] | undefined
  try {
    const secret = await createToken(base, 'client', 'development')
    const [polling, streaming] = await Promise.all([
      officialSdk(base, secret, 'polling', INTERVAL),
      officialSdk(base, secret, 'streaming', INTERVAL),
    ])
    clients.push(polling, streaming)
    // Every poll result of the polling SDK, with when it arrived (changed or not).
    const polls: number[] = []
    const pollingRepository = (polling as any).repository
    pollingRepository.on('changed', () => polls.push(performance.now()))
    pollingRepository.on('unchanged', () => polls.push(performance.now()))

    const signed = await signedIn(base)
    browser = signed.browser
    const page = signed.page
    await page.goto(`${base}/#/projects/default`)
    const toggle = page.getByRole('switch', { name: `${FLAG} in development` })
    await toggle.waitFor()

    const answered: number[] = []
    const rawPoll: number[] = []
    let rawPollHeld = 0
    const streamed: number[] = []
    const streamedAfterAnswer: number[] = []
    const polled: number[] = []
    let firstPollHeld = 0
    const load = loadAverage()
    for (let i = 0; i < TOGGLES; i++) {
      const enabled = !(await toggle.isChecked())
      const streamSeen = holds(streaming, FLAG, enabled)
      const pollSeen = holds(polling, FLAG, enabled)
      const response = page.waitForResponse(
        r => r.url().includes(`/features/${FLAG}/environments/development/`) && r.request().method() === 'POST',
      )
      const clicked = performance.now()
      await toggle.click()
      await (await response).finished()
      const answeredAt = performance.now()
      answered.push(answeredAt - clicked)
      // The next poll, made now: does it already hold the change?
      const poll = await fetch(`${base}/api/client/features`, { headers: { authorization: secret } })
      const features = ((await poll.json()) as { features: { name: string; enabled: boolean }[] }).features
      rawPoll.push(performance.now() - clicked)
      if (features.find(flag => flag.name === FLAG)?.enabled === enabled) rawPollHeld++
      const streamAt = await streamSeen
      streamed.push(streamAt - clicked)
      streamedAfterAnswer.push(streamAt - answeredAt)
      const pollAt = await pollSeen
      polled.push(pollAt - clicked)
      // Its first poll made after the answer: the first result arriving more than POLL_MS after it
      // (a loopback poll of 100 flags takes a few ms; one arriving sooner may have been asked before).
      const firstAfter = polls.find(at => at > answeredAt + POLL_MS)
      if (firstAfter !== undefined && pollAt <= firstAfter + 1) firstPollHeld++
      await Bun.sleep(50)
    }
    const row = (label: string, times: number[], extra = '') => {
      const { p50, p99, max } = spread(times)
      return [label, `${fmt(p50)} ms`, `${fmt(p99)} ms`, `${fmt(max)} ms`, extra]
    }
    console.log(
      `\n${TOGGLES} toggles of "${FLAG} in development" clicked in the console; polling SDK every ${INTERVAL} ms; load average ${load}\n`,
    )
    console.log(
      table(
        ['from the click to', 'p50', 'p99', 'max', ''],
        [
          row("the console showing the API's answer", answered),
          row('a poll made at that moment holding the change', rawPoll, `${rawPollHeld}/${TOGGLES} held it`),
          row('the streaming SDK holding it', streamed),
          row("(from the console's answer to the streaming SDK holding it)", streamedAfterAnswer),
          row(
            `the polling SDK holding it (interval ${INTERVAL} ms)`,
            polled,
            `${firstPollHeld}/${TOGGLES} at its first poll after the answer`,
          ),
        ],
      ),
    )
  } finally {
    for (const client of clients) client.destroy()
    await browser?.close()
    await server.stop()
    removeDir(dir)
  }
}
