/**
 * A small well-formedness check of the SVG the bench writes (bench/svg-chart.ts): one <svg> root in
 * the SVG namespace, tags balanced, attributes quoted and unique, only XML's own entities, no NaN
 * or Infinity in an attribute. Every chart passes it before it is written; from the command line,
 * `node --import tsx bench/svg-check.ts docs/bench/*.svg` checks files.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const NAME = /^[A-Za-z_][\w.:-]*$/
const ATTRIBUTE = /\s+([A-Za-z_][\w.:-]*)="([^"<]*)"/y
const ENTITY = /&(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9A-Fa-f]+);/y

function checkText(content: string, where: string, problems: string[]): void {
  for (let at = content.indexOf('&'); at >= 0; at = content.indexOf('&', at + 1)) {
    ENTITY.lastIndex = at
    if (!ENTITY.test(content)) problems.push(`${where}: a bare "&" or an unknown entity`)
  }
}

/** The problems found, none when the text is a well-formed SVG document. */
export function checkSvg(svg: string): string[] {
  const problems: string[] = []
  const stack: string[] = []
  let roots = 0
  let at = 0
  while (at < svg.length) {
    const open = svg.indexOf('<', at)
    const textEnd = open < 0 ? svg.length : open
    const between = svg.slice(at, textEnd)
    if (stack.length === 0 && between.trim() !== '') problems.push(`text outside the root element: "${between.trim().slice(0, 40)}"`)
    checkText(between, 'text', problems)
    if (open < 0) break
    if (svg.startsWith('<!--', open)) {
      const end = svg.indexOf('-->', open)
      if (end < 0) return [...problems, 'an unterminated comment']
      at = end + 3
      continue
    }
    const close = svg.indexOf('>', open)
    if (close < 0) return [...problems, 'an unterminated tag']
    const tag = svg.slice(open + 1, close)
    at = close + 1
    if (tag.startsWith('?xml')) continue
    if (tag.startsWith('/')) {
      const name = tag.slice(1).trim()
      const expected = stack.pop()
      if (name !== expected) problems.push(`</${name}> closes <${expected ?? 'nothing'}>`)
      continue
    }
    const selfClosing = tag.endsWith('/')
    const inner = selfClosing ? tag.slice(0, -1) : tag
    const name = /^[^\s]+/.exec(inner)?.[0] ?? ''
    if (!NAME.test(name)) {
      problems.push(`a tag with a bad name: <${tag.slice(0, 40)}>`)
      continue
    }
    const attributes = new Map<string, string>()
    ATTRIBUTE.lastIndex = name.length
    let match: RegExpExecArray | null
    let end = name.length
    while ((match = ATTRIBUTE.exec(inner)) !== null) {
      if (attributes.has(match[1]!)) problems.push(`<${name}>: attribute ${match[1]} twice`)
      attributes.set(match[1]!, match[2]!)
      checkText(match[2]!, `<${name} ${match[1]}>`, problems)
      if (/\b(NaN|Infinity|undefined)\b/.test(match[2]!)) problems.push(`<${name}>: ${match[1]}="${match[2]}"`)
      end = ATTRIBUTE.lastIndex
    }
    if (inner.slice(end).trim() !== '') problems.push(`<${name}>: cannot read "${inner.slice(end).trim().slice(0, 40)}"`)
    if (stack.length === 0) {
      roots++
      if (name !== 'svg') problems.push(`the root element is <${name}>, not <svg>`)
      if (attributes.get('xmlns') !== 'http://www.w3.org/2000/svg') problems.push('the root element lacks the SVG namespace')
    }
    if (!selfClosing) stack.push(name)
  }
  if (stack.length > 0) problems.push(`unclosed: <${stack.join('>, <')}>`)
  if (roots !== 1) problems.push(`${roots} root elements`)
  return problems
}

/** Writes a chart after checking it; a chart that fails the check is a bug, so it throws. */
export function writeSvg(file: string, svg: string): void {
  const problems = checkSvg(svg)
  if (problems.length > 0) throw new Error(`${file} is not well-formed SVG: ${problems.slice(0, 5).join('; ')}`)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, svg)
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let failed = false
  for (const file of process.argv.slice(2)) {
    const problems = checkSvg(fs.readFileSync(file, 'utf8'))
    failed ||= problems.length > 0
    console.log(problems.length === 0 ? `ok  ${file}` : `BAD ${file}\n  ${problems.join('\n  ')}`)
  }
  process.exitCode = failed ? 1 : 0
}
