// Progress of uploads and downloads, on stderr:
// - on a terminal: a bar redrawn in place, with bytes, speed and ETA, drawn by cli-progress;
// - elsewhere (a pipe, a file, TERM=dumb): plain lines, at most one a second plus a last one,
//   without escape codes;
// - with --json or --no-progress: nothing.
//
// cli-progress (https://github.com/npkgz/cli-progress, MIT) draws the bar: redraw throttling,
// line clearing, cursor hiding and width truncation for terminals. It is the most used Node
// progress bar that is still looked after (about 25 M downloads a month, one small dependency,
// string-width); `progress` (node-progress) has had no release since 2019. Speed and ETA are
// computed here over a sliding window, so that a resumed download does not count the bytes it
// already had as speed.
//
// cli-progress is an optional dependency of @fileshare/sdk (the library never loads it): an
// install with `--omit=optional` leaves it out, and the CLI then prints lines on a terminal too.
import { createRequire } from 'node:module'
import type * as CliProgress from 'cli-progress'
import { formatBytes, formatDuration, type Writable } from './output.js'

export type ProgressMode = 'bar' | 'lines' | 'none'

let cliProgressModule: typeof CliProgress | null | undefined

/** cli-progress when it is installed (an optional dependency), else null. */
export function loadCliProgress(): typeof CliProgress | null {
  if (cliProgressModule === undefined) {
    try {
      cliProgressModule = createRequire(import.meta.url)('cli-progress') as typeof CliProgress
    } catch {
      cliProgressModule = null
    }
  }
  return cliProgressModule
}

export interface Progress {
  /** `total` may be unknown (a stream of unknown length). */
  update(done: number, total: number | undefined): void
  /** The transfer ended well: the last state is drawn. */
  finish(): void
  /** The transfer failed: the bar stops where it was. */
  fail(): void
}

/** Which progress to show: bars on a terminal, lines elsewhere, none for --json / --no-progress. */
export function progressMode(stderr: Writable, options: { json: boolean; noProgress: boolean; term: string | undefined }): ProgressMode {
  if (options.json || options.noProgress) return 'none'
  if (stderr.isTTY === true && options.term !== 'dumb' && loadCliProgress()) return 'bar'
  return 'lines'
}

const WINDOW_MS = 5000

/** Bytes per second over the last few seconds. */
export class SpeedMeter {
  readonly #samples: { at: number; bytes: number }[] = []
  readonly #start: number

  constructor(private readonly now: () => number = () => performance.now()) {
    this.#start = now()
  }

  add(bytes: number): void {
    const at = this.now()
    this.#samples.push({ at, bytes })
    while (this.#samples.length > 2 && at - this.#samples[1]!.at > WINDOW_MS) this.#samples.shift()
  }

  /** Bytes per second, or undefined before there is anything to measure. */
  speed(): number | undefined {
    const first = this.#samples[0]
    const last = this.#samples.at(-1)
    if (!first || !last || last === first) return undefined
    const seconds = (last.at - first.at) / 1000
    if (seconds <= 0) return undefined
    return (last.bytes - first.bytes) / seconds
  }

  /** Seconds since the meter started. */
  elapsed(): number {
    return (this.now() - this.#start) / 1000
  }
}

function eta(done: number, total: number | undefined, speed: number | undefined): number | undefined {
  if (total === undefined || speed === undefined || speed <= 0) return undefined
  return Math.max(0, (total - done) / speed)
}

function percent(done: number, total: number | undefined): string {
  if (total === undefined) return '?'
  if (total === 0) return '100'
  return String(Math.floor((done / total) * 100))
}

interface State {
  done: number
  total: number | undefined
  speed: number | undefined
  finished: boolean
  elapsed: number
}

function describe(state: State): string {
  const size = state.total === undefined ? formatBytes(state.done) : `${formatBytes(state.done)}/${formatBytes(state.total)}`
  const speed = state.speed === undefined ? '-- B/s' : `${formatBytes(Math.round(state.speed))}/s`
  const time = state.finished
    ? `in ${formatDuration(state.elapsed, true)}`
    : `ETA ${formatDuration(eta(state.done, state.total, state.speed))}`
  return `${size}  ${speed}  ${time}`
}

class BarProgress implements Progress {
  #bar: CliProgress.SingleBar | undefined
  readonly #meter = new SpeedMeter()
  #state: State = { done: 0, total: undefined, speed: undefined, finished: false, elapsed: 0 }

  constructor(
    private readonly stream: Writable,
    private readonly label: string,
  ) {}

  update(done: number, total: number | undefined): void {
    this.#meter.add(done)
    this.#state = { ...this.#state, done, total, speed: this.#meter.speed(), elapsed: this.#meter.elapsed() }
    if (!this.#bar) {
      const cliProgress = loadCliProgress()!
      this.#bar = new cliProgress.SingleBar({
        stream: this.stream as NodeJS.WritableStream,
        fps: 8,
        barsize: 24,
        hideCursor: true,
        clearOnComplete: false,
        stopOnComplete: false,
        linewrap: false,
        barCompleteChar: '\u2588',
        barIncompleteChar: '\u2591',
        format: (options) => {
          const state = this.#state
          const progress = state.total === undefined ? 0 : state.total === 0 ? 1 : Math.min(1, state.done / state.total)
          const bar = cliProgress.Format.BarFormat(state.finished ? 1 : progress, options)
          return `${this.label} ${bar} ${percent(state.done, state.total).padStart(3)}%  ${describe(state)}`
        },
      })
      this.#bar.start(Math.max(1, total ?? 1), total === undefined ? 0 : done)
    } else {
      if (total !== undefined && total !== this.#bar.getTotal()) this.#bar.setTotal(Math.max(1, total))
      this.#bar.update(total === undefined ? 0 : done)
    }
  }

  finish(): void {
    if (!this.#bar) return
    this.#state = { ...this.#state, finished: true, elapsed: this.#meter.elapsed() }
    this.#bar.update(this.#state.total ?? 0)
    this.#bar.stop()
  }

  fail(): void {
    this.#bar?.stop()
  }
}

class LineProgress implements Progress {
  readonly #meter = new SpeedMeter()
  /** A line at most every second, the first one a second in: a quick transfer gets only its last line. */
  #lastLine = performance.now()
  #state: State = { done: 0, total: undefined, speed: undefined, finished: false, elapsed: 0 }
  /** Bytes already there when the transfer started (a resumed download). */
  #firstDone: number | undefined

  constructor(
    private readonly stream: Writable,
    private readonly label: string,
  ) {}

  update(done: number, total: number | undefined): void {
    this.#firstDone ??= done
    this.#meter.add(done)
    this.#state = { ...this.#state, done, total, speed: this.#meter.speed(), elapsed: this.#meter.elapsed() }
    const now = performance.now()
    if (now - this.#lastLine >= 1000) {
      this.#lastLine = now
      this.#write()
    }
  }

  #write(): void {
    this.stream.write(`${this.label}: ${percent(this.#state.done, this.#state.total)}%  ${describe(this.#state)}\n`)
  }

  finish(): void {
    if (this.#firstDone === undefined) return
    const elapsed = this.#meter.elapsed()
    // The speed of the whole transfer for the last line.
    const speed = elapsed > 0 ? (this.#state.done - this.#firstDone) / elapsed : undefined
    this.#state = { ...this.#state, finished: true, elapsed, speed }
    this.#write()
  }

  fail(): void {}
}

const NONE: Progress = { update: () => {}, finish: () => {}, fail: () => {} }

export function createProgress(mode: ProgressMode, stream: Writable, label: string): Progress {
  if (mode === 'bar') return new BarProgress(stream, label)
  if (mode === 'lines') return new LineProgress(stream, label)
  return NONE
}
