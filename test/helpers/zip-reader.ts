import yauzl from 'yauzl'

export interface ZipEntryRead {
  name: string
  /** 0 STORE, 8 DEFLATE */
  compressionMethod: number
  /** Whether the general purpose flag says the name is UTF-8 (bit 11). */
  utf8: boolean
  modified: Date
  data: Buffer
}

export interface ZipRead {
  entries: ZipEntryRead[]
  /** Whether the archive ends with a ZIP64 end of central directory record (signature 0x06064b50). */
  zip64: boolean
}

/**
 * Reads a whole ZIP with yauzl, an unzipper independent of the writer (yazl): every entry's name,
 * method and bytes, with its CRC-32 and sizes checked by yauzl. A name yauzl finds unsafe (absolute,
 * `..`, backslash) fails the read, as it would fail a careful unzip program.
 */
export async function readZip(archive: Buffer): Promise<ZipRead> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromBuffer(archive, { lazyEntries: true, strictFileNames: true, validateEntrySizes: true }, (error, opened) =>
      error ? reject(error) : resolve(opened),
    ),
  )
  const entries: ZipEntryRead[] = []
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject)
    zip.on('end', () => resolve())
    zip.on('entry', (entry: yauzl.Entry) => {
      zip.openReadStream(entry, (error, stream) => {
        if (error) return reject(error)
        const chunks: Buffer[] = []
        stream.on('data', (chunk: Buffer) => chunks.push(chunk))
        stream.on('error', reject)
        stream.on('end', () => {
          entries.push({
            name: entry.fileName,
            compressionMethod: entry.compressionMethod,
            utf8: (entry.generalPurposeBitFlag & 0x800) !== 0,
            modified: entry.getLastModDate(),
            data: Buffer.concat(chunks),
          })
          zip.readEntry()
        })
      })
    })
    zip.readEntry()
  })
  const zip64Signature = Buffer.from([0x50, 0x4b, 0x06, 0x06])
  return { entries, zip64: archive.lastIndexOf(zip64Signature) > archive.length - 200 }
}
