import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { ServiceUnavailableError } from '../errors.js'

/**
 * A stored second factor the server cannot read: encrypted under another FILESHARE_TWO_FACTOR_KEY
 * (or with none set now), damaged, or of an unknown form. Nothing the holder can mend, so not a
 * wrong code: a 503 `service_unavailable` (the holder reads the registry's message, the request id
 * and nothing about the account), and this message, which names what the operator can do and no
 * secret, in the server's log line of the failed request (plugins/error-handler.ts).
 */
export class UnreadableTwoFactorSecretError extends ServiceUnavailableError {
  constructor(
    readonly accountId: number,
    problem: string,
  ) {
    super(
      `The two-factor secret of account ${accountId} ${problem}: its holder cannot sign in. Set the ` +
        'FILESHARE_TWO_FACTOR_KEY it was encrypted with, or turn the second factor off with ' +
        `\`fileshare account reset-two-factor ${accountId}\` (the holder enrols again); ` +
        '`fileshare two-factor encrypt-secrets --dry-run` lists every account whose secret does not decrypt.',
    )
    this.name = 'UnreadableTwoFactorSecretError'
  }
}

/**
 * How a holder's TOTP secret is kept in the database. Unlike a password it cannot be hashed: the
 * server computes the expected code from it. With FILESHARE_TWO_FACTOR_KEY set it is encrypted with
 * AES-256-GCM under that key, bound to its account (the account id is the additional data, so a row
 * copied onto another account does not decrypt): a database dump or backup alone then gives away no
 * second factor. Without the key it is stored as it is, and a dump gives the second factors away
 * (docs/security.md weighs the two). The format names itself, so setting a key later still reads
 * the secrets stored before it, and new ones are encrypted; `fileshare two-factor encrypt-secrets`
 * encrypts those stored before (two-factor-encryption.ts).
 *
 * `aes256gcm:<iv>:<ciphertext>:<tag>` (base64url) or `plain:<base32 secret>`.
 */
export class TwoFactorSecretBox {
  private readonly key: Buffer | undefined

  /** `hexKey`: 64 hex digits (config.twoFactorKey), or undefined to store secrets as they are. */
  constructor(hexKey: string | undefined) {
    this.key = hexKey === undefined ? undefined : Buffer.from(hexKey, 'hex')
  }

  get encrypts(): boolean {
    return this.key !== undefined
  }

  seal(secret: string, accountId: number): string {
    if (!this.key) return `plain:${secret}`
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.key, iv)
    cipher.setAAD(Buffer.from(`account ${accountId}`))
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
    return ['aes256gcm', iv.toString('base64url'), sealed.toString('base64url'), cipher.getAuthTag().toString('base64url')].join(':')
  }

  /** Whether `stored` is kept as it is (stored before a key was set, or with none set). */
  static isPlain(stored: string): boolean {
    return stored.startsWith('plain:')
  }

  /**
   * The secret in the clear. Throws UnreadableTwoFactorSecretError (never the secret in its
   * message) when it was encrypted and the key is missing or another one: the operator must give
   * the key back, or reset the holder's second factor (`fileshare account reset-two-factor`).
   */
  open(stored: string, accountId: number): string {
    const [scheme, ...parts] = stored.split(':')
    if (scheme === 'plain' && parts.length === 1) return parts[0]!
    if (scheme !== 'aes256gcm' || parts.length !== 3) throw new UnreadableTwoFactorSecretError(accountId, 'is stored in an unknown form')
    if (!this.key) throw new UnreadableTwoFactorSecretError(accountId, 'is encrypted, and FILESHARE_TWO_FACTOR_KEY is not set')
    const [iv, sealed, tag] = parts.map((part) => Buffer.from(part, 'base64url'))
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv!)
      decipher.setAAD(Buffer.from(`account ${accountId}`))
      decipher.setAuthTag(tag!)
      return Buffer.concat([decipher.update(sealed!), decipher.final()]).toString('utf8')
    } catch {
      throw new UnreadableTwoFactorSecretError(accountId, 'does not decrypt with FILESHARE_TWO_FACTOR_KEY (another key, or damaged)')
    }
  }
}
