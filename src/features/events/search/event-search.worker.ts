/**
 * The event-search worker: holds the one in-memory copy of the event log and its indexes, and
 * answers searches with the response's bytes, so the HTTP thread never spends time on them. Messages are handled in order,
 * so events appended before a search are visible to it.
 */
import { heapStats } from 'bun:jsc'
import { EventSearchEngine } from './search-engine'
import { readEventLines } from '../../../storage/event-log'
import { FileLines, SpilledLines } from './file-lines'
import type { EventSearchReply, EventSearchRequest } from './event-search.messages'

declare const self: Worker

/** Events of index work between two looks at the message queue while the index is built. */
const INDEX_STEP = 2000

let engine: EventSearchEngine | null = null
let building = false

function reply(message: EventSearchReply, transfer: Transferable[] = []) {
  self.postMessage(message, transfer)
}

async function open(message: Extract<EventSearchRequest, { type: 'open' }>) {
  if (message.path !== null) {
    const path = message.path
    const lines = new FileLines(path)
    engine = new EventSearchEngine({ commonAfter: message.commonAfter, lines })
    await readEventLines(path, message.lastId, (line, event) => engine!.add(line, event))
  } else {
    engine = new EventSearchEngine({ commonAfter: message.commonAfter, lines: message.spill ? new SpilledLines() : undefined })
    for (const line of message.lines) engine.add(line)
  }
  reply({ type: 'loaded', events: engine.size })
  if (message.buildIndex) buildIndex()
}

/** Builds the text index in steps, leaving room between them for searches and appends. */
function buildIndex() {
  if (building) return
  building = true
  const started = performance.now()
  const step = () => {
    if (engine!.indexStep(INDEX_STEP)) {
      building = false
      const buildMs = Math.round(performance.now() - started)
      Bun.gc(true)
      reply({ type: 'index-ready', events: engine!.size, buildMs, heapBytes: heapStats().heapSize })
    } else setTimeout(step, 0)
  }
  step()
}

self.onmessage = (event: MessageEvent<EventSearchRequest>) => {
  const message = event.data
  switch (message.type) {
    case 'open':
      open(message).catch((error) => reply({ type: 'load-failed', message: error instanceof Error ? error.message : String(error) }))
      break
    case 'append':
      for (const line of message.lines) engine!.add(line)
      break
    case 'search':
      try {
        const result = engine!.search(message.query, message.visibility)
        // The answer's bytes are made here and handed over, so the HTTP thread neither joins nor encodes a page.
        const body = engine!.pageJson(result)
        reply({ type: 'result', id: message.id, total: result.total, body, plan: result.plan }, [body.buffer])
      } catch (error) {
        reply({ type: 'failed', id: message.id, message: error instanceof Error ? error.message : String(error) })
      }
      break
  }
}
