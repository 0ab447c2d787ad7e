/**
 * The one place that asks the garbage collector for a collection (the only `Bun.gc` in src/). Two
 * kinds of work make garbage the collector does not pace itself for, because it lies mostly
 * outside its heap (ArrayBuffers, strings of mapped files), and it let it pile up:
 *
 * - a steady flow of it, counted with `madeGarbage`: the event search's answers (made in the worker
 *   and handed to the HTTP thread, then sent) and the vocabulary's terms read from each segment.
 *   Measured at 10M events: the last page searched at 13,000 req/s on 32 connections held 1.2 GB
 *   more resident memory without it (against 0.1 GB for /health at 39,000 req/s); building the
 *   vocabulary of 153 segments peaked at 713 MiB RSS without it, 521 MiB with it.
 * - a large batch of it at once, after which `collectNow` runs a full collection: a segment cut
 *   from the tail or built from a piece of the log, a search index built. Measured: rebuilding the
 *   segments of 10M events approached 2 GB RSS without it; two servers rebuilding the segments of
 *   1M events side by side, one with these nudges and one without, held 685 against 1,492 MiB
 *   (median over 9 minutes; peaks 1,170 against 1,904 MiB).
 *
 * Each thread (the HTTP thread, each worker) has its own budget: modules are per thread.
 */

/** Bytes made between two collections asked for: what the search's answers and the vocabulary were measured with. */
const BUDGET = 32 << 20

let made = 0

/** Counts `bytes` made (soon garbage); asks for a collection, without waiting for it, once they add up to the budget. */
export function madeGarbage(bytes: number): void {
  made += bytes
  if (made < BUDGET) return
  made = 0
  Bun.gc(false)
}

/**
 * A collection, without waiting for it, between two steps of work whose garbage is mostly small
 * strings (a word each): the text index's build. Measured on 21,000 events: resident memory after
 * the build 115 MiB without it and 90 MiB with one per 2,000 events, the heap alike (19 and 22 MiB);
 * pages such garbage filled stay with the process after it is collected.
 */
export function collectBetweenSteps(): void {
  made = 0
  Bun.gc(false)
}

/** A full collection now, after work that left a large batch of garbage. */
export function collectNow(): void {
  made = 0
  Bun.gc(true)
}

/** How often a thread looks whether it fell idle: one look costs a comparison. */
const IDLE_CHECK_MS = 2000

/**
 * How long a thread stays idle before it also drops the code it compiled (`Bun.shrink`: every
 * function's bytecode and machine code, then a full collection and the allocator's free pages
 * given back), so that what a server at rest holds does not depend on how much code its past
 * work compiled. Measured on the compiled server after 21,000 writes through the API: 12 MiB less
 * at rest (121 against 133 MiB), 14 MiB less after a restart on that data (97 against 111); the
 * first request of each path afterwards costs 5 to 25 ms instead of about 1, as the code is
 * compiled again. Longer than an SDK's polling interval (15 s by default), so a server polled by
 * even one SDK never pays that.
 */
const SHRINK_AFTER_MS = 30_000

let workDone = 0
let idleTimer: ReturnType<typeof setInterval> | null = null

/** Drops compiled code, collects and returns free pages; a full collection where the runtime has no `Bun.shrink`. */
function shrink(): void {
  const bun = Bun as { shrink?: () => void }
  if (typeof bun.shrink === 'function') {
    made = 0
    bun.shrink()
  } else collectNow()
}

/**
 * Marks work done (a request answered, a message handled). When a thread that worked then does
 * nothing for a whole look (2 to 4 s), it runs one full collection: what its work left (the
 * indexing of appended events, parsed bodies, answers) is then freed while nothing runs, instead
 * of staying resident until the collector's own pace next reaches it. Idle for SHRINK_AFTER_MS, it
 * drops its compiled code too.
 */
export function worked(): void {
  workDone++
  if (idleTimer !== null) return
  let seen = workDone
  let idleLooks = 0
  idleTimer = setInterval(() => {
    if (workDone !== seen) {
      seen = workDone
      idleLooks = 0
      return
    }
    idleLooks++
    if (idleLooks === 1) collectNow()
    else if (idleLooks * IDLE_CHECK_MS >= SHRINK_AFTER_MS) {
      clearInterval(idleTimer!)
      idleTimer = null
      shrink()
    }
  }, IDLE_CHECK_MS)
  // A look must not keep the process alive on its own.
  ;(idleTimer as unknown as { unref?(): void }).unref?.()
}
