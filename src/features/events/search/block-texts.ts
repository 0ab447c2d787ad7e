/** A growable list of the events' searchable texts, packed 64 to a string (see BlockTexts). */
import { IntList } from './columns'

/** Events per block: per string of texts, and per document of the term index. */
export const BLOCK = 64

/**
 * The searchable texts, a full block of 64 events joined into one string (by newlines, which no
 * JSON text holds and no needle may hold), the events of the last, partial block one string each.
 * A scan then finds matches with native substring search across a block instead of one call per
 * event, and the log costs one string per 64 events.
 */
export class BlockTexts {
  private readonly blocks: string[] = []
  /** Start of each event's text within its block's string. */
  private readonly starts = new IntList()
  private tail: string[] = []

  get size() {
    return this.blocks.length * BLOCK + this.tail.length
  }

  get fullBlocks() {
    return this.blocks.length
  }

  add(text: string) {
    this.tail.push(text)
    if (this.tail.length < BLOCK) return
    let offset = 0
    for (const part of this.tail) {
      this.starts.push(offset)
      offset += part.length + 1
    }
    this.blocks.push(this.tail.join('\n'))
    this.tail = []
  }

  /** The texts of full block `block`, joined by newlines. */
  block(block: number): string {
    return this.blocks[block]
  }

  private end(index: number, block: string) {
    return (index + 1) % BLOCK === 0 ? block.length : this.starts.data[index + 1] - 1
  }

  get(index: number): string {
    const block = Math.floor(index / BLOCK)
    if (block === this.blocks.length) return this.tail[index - block * BLOCK]
    return this.blocks[block].slice(this.starts.data[index], this.end(index, this.blocks[block]))
  }

  contains(index: number, needle: string): boolean {
    const block = Math.floor(index / BLOCK)
    if (block === this.blocks.length) return this.tail[index - block * BLOCK].includes(needle)
    const text = this.blocks[block]
    const end = this.end(index, text)
    const at = text.indexOf(needle, this.starts.data[index])
    return at !== -1 && at + needle.length <= end
  }

  /** Appends to `out`, ascending, the events of full block `block` whose text contains `needle`. */
  matchesInBlock(block: number, needle: string, out: number[]) {
    const text = this.blocks[block]
    const last = (block + 1) * BLOCK - 1
    let event = block * BLOCK
    for (let at = text.indexOf(needle); at !== -1; ) {
      while (event < last && this.starts.data[event + 1] <= at) event++
      out.push(event)
      if (event === last) return
      at = text.indexOf(needle, this.starts.data[event + 1])
    }
  }
}
