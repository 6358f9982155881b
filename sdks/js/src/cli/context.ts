// What a command runs with: the parsed command line, the output, the progress mode, the
// interrupt signal, and the client (key and base URL from flags or the environment).
import { Fileshare } from '../client.js'
import { ConfigurationError } from '../errors.js'
import { integerOption, type OptionSpec, type ParsedCommandLine } from './args.js'
import { UsageError } from './exit-codes.js'
import { Output, type Writable } from './output.js'
import { createProgress, progressMode, type Progress, type ProgressMode } from './progress.js'

export interface CliIo {
  argv: readonly string[]
  env: Readonly<Record<string, string | undefined>>
  stdout: Writable & NodeJS.WritableStream
  stderr: Writable
  /** Read by --password-stdin only. */
  stdin?: (AsyncIterable<string | Uint8Array> & { readonly isTTY?: boolean | undefined }) | undefined
  /** Aborted on SIGINT/SIGTERM. */
  signal: AbortSignal
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}

export class Context {
  readonly out: Output
  readonly progressMode: ProgressMode
  readonly apiKey: string | undefined
  readonly baseUrl: string | undefined
  readonly maxRetries: number | undefined

  constructor(
    readonly io: CliIo,
    readonly args: ParsedCommandLine,
    /** Strings never to write: the key from the environment and from --api-key. */
    secrets: readonly string[] = [],
  ) {
    const { values } = args
    this.apiKey = nonEmpty(values['api-key']) ?? nonEmpty(io.env.FILESHARE_API_KEY)
    this.baseUrl = nonEmpty(values['base-url']) ?? nonEmpty(io.env.FILESHARE_BASE_URL)
    this.maxRetries = integerOption(values.retries, 'retries', 0, 10)
    const json = values.json === true
    this.out = new Output(io.stdout, io.stderr, { json, secrets: this.apiKey ? [this.apiKey, ...secrets] : [...secrets] })
    this.progressMode = progressMode(io.stderr, { json, noProgress: values['no-progress'] === true, term: io.env.TERM })
  }

  get json(): boolean {
    return this.out.json
  }

  get signal(): AbortSignal {
    return this.io.signal
  }

  /** A client for the configured server and key; ConfigurationError (exit 12) when one is missing. */
  client(): Fileshare {
    if (!this.baseUrl) {
      throw new ConfigurationError('no base URL: pass --base-url URL (e.g. https://files.example.com/api/v1) or set FILESHARE_BASE_URL')
    }
    if (!/^https?:\/\/[^/]+/.test(this.baseUrl)) {
      throw new ConfigurationError(
        `the base URL must be an http(s) URL ending in /api/v1, got ${JSON.stringify(this.baseUrl.slice(0, 100))}`,
      )
    }
    if (!this.apiKey) throw new ConfigurationError('no API key: pass --api-key KEY or set FILESHARE_API_KEY')
    return this.#make(this.baseUrl, this.apiKey)
  }

  /**
   * A client that only follows public links (downloads never send the key). When no base URL or
   * key is configured, the link's own server and a placeholder key are used: the SDK's
   * constructor wants both, and a link download sends neither.
   */
  linkClient(link: URL): Fileshare {
    if (this.baseUrl && this.apiKey && /^https?:\/\/[^/]+/.test(this.baseUrl)) return this.#make(this.baseUrl, this.apiKey)
    return this.#make(`${link.origin}/api/v1`, 'fsk_public-link-download-sends-no-key')
  }

  #make(baseUrl: string, apiKey: string): Fileshare {
    return new Fileshare({ baseUrl, apiKey, ...(this.maxRetries === undefined ? {} : { maxRetries: this.maxRetries }) })
  }

  /**
   * The password of `--password-stdin` (undefined without it): everything on stdin, less the line
   * break that ends it. Never written anywhere from then on. A terminal is refused: what is typed
   * there shows on the screen.
   */
  async passwordFromStdin(): Promise<string | undefined> {
    if (this.args.values['password-stdin'] !== true) return undefined
    const stdin = this.io.stdin
    if (!stdin || stdin.isTTY === true) {
      throw new UsageError('--password-stdin reads the password from a pipe or a file, not from a terminal (e.g. < password.txt)')
    }
    const decoder = new TextDecoder()
    let text = ''
    for await (const chunk of stdin) text += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true })
    const password = (text + decoder.decode()).replace(/\r?\n$/, '')
    if (password === '') throw new UsageError('--password-stdin: stdin held no password')
    this.out.protect(password)
    return password
  }

  progress(label: string): Progress {
    return createProgress(this.progressMode, this.io.stderr, label)
  }
}

/** `--password-stdin`, as every command that takes a password spells it. */
export const PASSWORD_STDIN: OptionSpec = {
  type: 'boolean',
  description: 'read the password from stdin (a pipe or a file; one line, its line break dropped); never printed',
}
