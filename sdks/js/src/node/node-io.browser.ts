// Stand-in for node-io.ts in browser bundles ("browser" field of package.json): paths and Node
// streams do not exist there. The SDK never calls these outside Node.
import { ConfigurationError } from '../errors.js'
import type { Sha256 } from '../hash.js'

const unavailable = (what: string) =>
  new ConfigurationError(`${what} needs Node.js; in a browser pass a Blob/File, bytes or a ReadableStream`)

export function createNodeSha256(): Sha256 {
  throw unavailable('node:crypto')
}
export function sha256Base64(_data: Uint8Array): string {
  throw unavailable('node:crypto')
}
export async function describePath(_path: string): Promise<{ size: number; name: string }> {
  throw unavailable('a file path')
}
// eslint-disable-next-line require-yield
export async function* readPath(_path: string, _start = 0): AsyncGenerator<Uint8Array> {
  throw unavailable('a file path')
}
export function isNodeReadable(_value: unknown): boolean {
  return false
}
export function isNodeWritable(_value: unknown): boolean {
  return false
}
export async function fileSize(_path: string): Promise<number> {
  throw unavailable('a file path')
}
export async function removePath(_path: string): Promise<void> {
  throw unavailable('a file path')
}
export interface FileSink {
  write(chunk: Uint8Array): Promise<void>
  truncate(length: number): Promise<void>
  close(): Promise<void>
}
export async function openFileSink(_path: string, _offset: number): Promise<FileSink> {
  throw unavailable('a file path')
}
export function writeToNodeStream(_stream: unknown, _chunk: Uint8Array): Promise<void> {
  throw unavailable('a Node stream')
}
