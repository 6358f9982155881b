import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

/**
 * How a holder's TOTP secret is kept in the database. Unlike a password it cannot be hashed: the
 * server computes the expected code from it. With FILESHARE_TWO_FACTOR_KEY set it is encrypted with
 * AES-256-GCM under that key, bound to its account (the account id is the additional data, so a row
 * copied onto another account does not decrypt): a database dump or backup alone then gives away no
 * second factor. Without the key it is stored as it is, and a dump gives the second factors away
 * (docs/security.md weighs the two). The format names itself, so setting a key later still reads
 * the secrets stored before it, and new ones are encrypted.
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

  /**
   * The secret in the clear. Throws (a fault, never the secret in its message) when it was encrypted
   * and the key is missing or another one: the operator must give the key back, or reset the holder's
   * second factor (`fileshare account reset-two-factor`).
   */
  open(stored: string, accountId: number): string {
    const [scheme, ...parts] = stored.split(':')
    if (scheme === 'plain' && parts.length === 1) return parts[0]!
    if (scheme !== 'aes256gcm' || parts.length !== 3)
      throw new Error(`The second factor of account ${accountId} is stored in an unknown form.`)
    if (!this.key) {
      throw new Error(`The second factor of account ${accountId} is encrypted, and FILESHARE_TWO_FACTOR_KEY is not set.`)
    }
    const [iv, sealed, tag] = parts.map((part) => Buffer.from(part, 'base64url'))
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv!)
      decipher.setAAD(Buffer.from(`account ${accountId}`))
      decipher.setAuthTag(tag!)
      return Buffer.concat([decipher.update(sealed!), decipher.final()]).toString('utf8')
    } catch {
      throw new Error(`The second factor of account ${accountId} does not decrypt with FILESHARE_TWO_FACTOR_KEY (another key?).`)
    }
  }
}
