/**
 * The event-search worker: holds the event log's indexes (for a data directory, or the local copy
 * of a database's log, segments on disk and the newest events in memory; for a memory store,
 * everything in memory) and answers searches
 * with the response's bytes, so the HTTP thread never spends time on them. Messages are handled in
 * order, and those that come while the log loads wait for it, so events appended before a search
 * are visible to it.
 */
import { heapStats } from 'bun:jsc'
import { EventSearchEngine } from './search-engine'
import { readEventLines } from '../../../storage/event-log'
import { openSync, truncateSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { SegmentedSearch } from './segmented-search'
import { SearchWorkExceeded } from './search-work'
import { collectBetweenSteps, collectNow, madeGarbage, worked } from '../../../workers/garbage'
import type { CheckPace, EventSearchReply, EventSearchRequest, RebuildPace } from './event-search.messages'

declare const self: Worker

/** Bytes of garbage a search leaves besides its page (its query, bitmaps, arrays): a rough figure for workers/garbage.ts. */
const SEARCH_GARBAGE = 16 << 10
/** Events of index work between two looks at the message queue while the index is built. */
const INDEX_STEP = 2000

let engine: Pick<EventSearchEngine, 'add' | 'search' | 'pageJson' | 'indexStep' | 'size'> | null = null
/** A data directory's log, while it has segments to rebuild. */
let rebuilding: SegmentedSearch | null = null
/** A data directory's log, while the checksums of the segments found at start are read. */
let checking: SegmentedSearch | null = null
/** Whether the text index is to be built (after any rebuild). */
let indexWanted = false
/** Events the rebuild is to build. */
let toRebuild = 0
let rebuildStarted = 0
let pace: RebuildPace = { stepEvents: INDEX_STEP, pauseMs: 0 }
/**
 * Of the segments' checksums read in the background: 4 MiB a step (a few ms from the page cache),
 * then a pause, so that the check takes a fraction of a core and of the disk, and searches that
 * come meanwhile wait at most a step. Searches check what is left themselves.
 */
let checkPace: CheckPace = { stepBytes: 1 << 22, pauseMs: 2 }
let building = false
/** The local copy of a database's log (`open` with `cache`), appended to before the events are searched. */
let cache: { fd: number; path: string; size: () => number } | null = null
/** Why the search cannot go on (the copy could not be written), answered to every search from then on. */
let broken: string | null = null
/** Messages that came while the log was loading, handled once it has. */
let waiting: EventSearchRequest[] | null = null

function reply(message: EventSearchReply, transfer: Transferable[] = []) {
  self.postMessage(message, transfer)
}

async function open(message: Extract<EventSearchRequest, { type: 'open' }>) {
  waiting = []
  try {
    if (message.path !== null) {
      const path = message.path
      const segmented = new SegmentedSearch(path, {
        dataDir: message.segmentDir ?? dirname(path),
        segmentEvents: message.segmentEvents,
        readBackLimit: message.readBackLimit,
        commonAfter: message.commonAfter,
        log: notice => reply({ type: 'notice', message: notice }),
      })
      segmented.openSegments(message.lastId)
      reply({ type: 'opened', segments: segmented.segmentCount, events: segmented.size })
      // Missing segments are built after `loaded`, in the background; the tail is read now.
      rebuildStarted = performance.now()
      toRebuild = segmented.planRebuild(message.lastId)
      if (toRebuild > 0) rebuilding = segmented
      if (segmented.checking) checking = segmented
      try {
        await readEventLines(path, message.lastId, (line, event) => segmented.add(line, event), {
          id: segmented.size,
          offset: segmented.logEnd,
        })
      } catch (error) {
        if (!message.cache) throw error
        // The copy keeps what could be read; the database gives the rest again.
        reply({
          type: 'notice',
          message: `the local copy of the event log is cut after event ${segmented.size}: ${error instanceof Error ? error.message : String(error)}`,
        })
        truncateSync(path, segmented.logEnd)
      }
      if (message.cache) cache = { fd: openSync(path, 'a'), path, size: () => segmented.logEnd }
      engine = segmented
    } else {
      const memory = new EventSearchEngine({ commonAfter: message.commonAfter })
      for (const line of message.lines) memory.add(line)
      engine = memory
    }
  } finally {
    const queued = waiting
    waiting = null
    if (engine !== null) {
      reply({ type: 'loaded', events: engine.size, rebuilding: rebuilding !== null })
      indexWanted = message.buildIndex
      pace = message.rebuild ?? pace
      checkPace = message.check ?? checkPace
      if (rebuilding || checking || indexWanted) buildIndex()
      for (const queuedMessage of queued) handle(queuedMessage)
    }
  }
}

/** One step of the rebuild of missing segments; tells when it is done. */
function rebuildStep() {
  const segmented = rebuilding!
  try {
    if (segmented.rebuildStep(pace.stepEvents)) {
      rebuilding = null
      reply({
        type: 'rebuilt',
        segments: segmented.segmentCount,
        events: toRebuild,
        ms: Math.round(performance.now() - rebuildStarted),
      })
    }
  } catch (error) {
    // The log could not be read as events: searches go on reading those runs of it, and the
    // index, which needs every segment, is not built.
    rebuilding = null
    indexWanted = false
    reply({
      type: 'notice',
      message: `search segments not rebuilt: ${error instanceof Error ? error.message : String(error)}`,
    })
  }
}

/** Rebuilds the segments that a check (in the background or by a search) found damaged and dropped. */
function rebuildDropped(segmented: SegmentedSearch) {
  if (!segmented.rebuilding || rebuilding !== null) return
  rebuilding = segmented
  toRebuild = segmented.pendingEvents
  rebuildStarted = performance.now()
  buildIndex()
}

/** One step of the background check of the segments' checksums. */
function checkStep() {
  const segmented = checking!
  if (segmented.checkStep(checkPace.stepBytes)) checking = null
  rebuildDropped(segmented)
}

/**
 * Rebuilds missing segments, checks the checksums of those found at start, then builds the text
 * index (when wanted), in steps, leaving room between them for searches and appends.
 */
function buildIndex() {
  if (building) return
  building = true
  const started = performance.now()
  const step = () => {
    if (rebuilding !== null) {
      rebuildStep()
      setTimeout(step, pace.pauseMs)
      return
    }
    if (checking !== null) {
      checkStep()
      setTimeout(step, checkPace.pauseMs)
      return
    }
    if (!indexWanted) {
      building = false
      return
    }
    if (engine!.indexStep(INDEX_STEP)) {
      building = false
      const buildMs = Math.round(performance.now() - started)
      collectNow()
      const segmentBytes = engine instanceof SegmentedSearch ? engine.segmentBytes : 0
      reply({ type: 'index-ready', events: engine!.size, buildMs, heapBytes: heapStats().heapSize, segmentBytes })
    } else {
      collectBetweenSteps()
      setTimeout(step, 0)
    }
  }
  step()
}

/**
 * Appends lines to the local copy, where the segments and the tail read them back by byte offset.
 * A copy that cannot take them (a full disk) is cut back and searches fail from then on, saying
 * why: what they would read would not be these events. A restart reads the rest from the database.
 */
function copied(copy: NonNullable<typeof cache>, lines: readonly string[]): boolean {
  if (lines.length === 0) return true
  const bytes = Buffer.from(lines.join('\n') + '\n')
  try {
    for (let done = 0; done < bytes.length; ) done += writeSync(copy.fd, bytes, done, bytes.length - done)
    return true
  } catch (error) {
    broken = `the local copy of the event log (${copy.path}) cannot be written: ${error instanceof Error ? error.message : String(error)}`
    reply({ type: 'notice', message: broken })
    try {
      truncateSync(copy.path, copy.size())
    } catch {}
    return false
  }
}

function handle(message: EventSearchRequest) {
  worked()
  if (waiting !== null && message.type !== 'open') {
    waiting.push(message)
    return
  }
  switch (message.type) {
    case 'open':
      open(message).catch(error =>
        reply({ type: 'load-failed', message: error instanceof Error ? error.message : String(error) }),
      )
      break
    case 'build-index':
      indexWanted = true
      buildIndex()
      break
    case 'append':
      if (broken !== null) break
      if (cache !== null && !copied(cache, message.lines)) break
      for (const line of message.lines) engine!.add(line)
      break
    case 'search': {
      const started = performance.now()
      try {
        if (broken !== null) throw new Error(broken)
        // A search queued past its request's end is not begun; one under way stops then (search-work.ts).
        if (Date.now() > message.deadline)
          throw new SearchWorkExceeded('deadline', 'the request was given up before the search began')
        const result =
          engine instanceof SegmentedSearch
            ? engine.search(message.query, message.visibility, message.deadline)
            : engine!.search(message.query, message.visibility)
        // The answer's bytes are made here and handed over, so the HTTP thread neither joins nor encodes a page.
        const body = engine!.pageJson(result)
        madeGarbage(body.byteLength + SEARCH_GARBAGE)
        reply({ type: 'result', id: message.id, total: result.total, body, plan: result.plan }, [body.buffer])
      } catch (error) {
        const exceeded = error instanceof SearchWorkExceeded ? error.reason : undefined
        reply({
          type: 'failed',
          id: message.id,
          message: error instanceof Error ? error.message : String(error),
          exceeded,
        })
      }
      // The search finished the checks left (even one stopped past its deadline), and may have dropped a damaged segment.
      if (checking !== null && !checking.checking) checking = null
      if (engine instanceof SegmentedSearch) rebuildDropped(engine)
      // While segments are rebuilt, each search is followed by as long of rebuilding (a step at
      // least): searches come as messages, ahead of the rebuild's timer, and one after another they
      // would starve it (measured: a rebuild of 1M events stretched to 8 minutes by sequential
      // searches), while every segment built makes the next searches cheaper.
      if (rebuilding !== null) {
        const until = 2 * performance.now() - started
        do rebuildStep()
        while (rebuilding !== null && performance.now() < until)
      }
      break
    }
  }
}

self.onmessage = (event: MessageEvent<EventSearchRequest>) => handle(event.data)
