import { createRequire } from 'node:module'
import { createSHA256, type IHasher } from 'hash-wasm'

const HASH_WASM_VERSION = (createRequire(import.meta.url)('hash-wasm/package.json') as { version: string }).version

/**
 * Names the code that wrote a saved state. hash-wasm documents its states as valid only for the
 * same version, so the version is part of the name (and package.json pins it exactly).
 */
export const RESUMABLE_SHA256_IMPLEMENTATION = `hash-wasm@${HASH_WASM_VERSION}/sha256`

/** A saved state that this code cannot resume: written by another version, or not a state at all. */
export class IncompatibleHashStateError extends Error {
  constructor(
    message: string,
    /** The implementation named in the state, when it could be read. */
    readonly implementation?: string,
  ) {
    super(message)
    this.name = 'IncompatibleHashStateError'
  }
}

/**
 * A SHA-256 whose progress can be saved after any byte and resumed later, in another request or
 * another process: an upload that arrives in many requests gets the hash of the whole file without
 * reading it again.
 *
 * A saved state is one byte giving the length of the implementation name, that name in ASCII
 * (RESUMABLE_SHA256_IMPLEMENTATION), then hash-wasm's own state (116 bytes for 4.13.0). It may
 * hold up to 63 bytes of the hashed content: keep it as private as the file.
 */
export class ResumableSha256 {
  private finished = false

  private constructor(private readonly hasher: IHasher) {}

  static async create(): Promise<ResumableSha256> {
    const hasher = await createSHA256()
    hasher.init()
    return new ResumableSha256(hasher)
  }

  /** Resumes a state from save(); throws IncompatibleHashStateError for a state of another version. */
  static async load(state: Uint8Array): Promise<ResumableSha256> {
    const nameLength = state[0]
    if (nameLength === undefined || state.length < 1 + nameLength) {
      throw new IncompatibleHashStateError('Not a saved SHA-256 state: too short.')
    }
    const implementation = Buffer.from(state.subarray(1, 1 + nameLength)).toString('latin1')
    if (implementation !== RESUMABLE_SHA256_IMPLEMENTATION) {
      throw new IncompatibleHashStateError(
        `The SHA-256 state was saved by ${JSON.stringify(implementation)}; this build resumes only ${RESUMABLE_SHA256_IMPLEMENTATION}.`,
        implementation,
      )
    }
    const hasher = await createSHA256()
    try {
      hasher.load(state.subarray(1 + nameLength))
    } catch (error) {
      throw new IncompatibleHashStateError(`The SHA-256 state is damaged: ${(error as Error).message}`, implementation)
    }
    return new ResumableSha256(hasher)
  }

  update(chunk: Uint8Array): this {
    this.assertOpen()
    this.hasher.update(chunk)
    return this
  }

  /** The state after every byte given so far; the hasher stays usable. */
  save(): Uint8Array {
    this.assertOpen()
    const name = Buffer.from(RESUMABLE_SHA256_IMPLEMENTATION, 'latin1')
    const raw = this.hasher.save()
    const state = new Uint8Array(1 + name.length + raw.length)
    state[0] = name.length
    state.set(name, 1)
    state.set(raw, 1 + name.length)
    return state
  }

  /** Lower-case hex SHA-256 of every byte given; the hasher is finished afterwards. */
  digestHex(): string {
    this.assertOpen()
    this.finished = true
    return this.hasher.digest('hex')
  }

  private assertOpen(): void {
    if (this.finished) throw new Error('The SHA-256 was already finished by digestHex().')
  }
}
