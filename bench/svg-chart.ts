/**
 * The bench's pictures: horizontal grouped bar charts and line charts, written as plain SVG text
 * (about 200 lines, no dependency). A charting library would bring a DOM (or a headless browser)
 * to lay out text, and the output would change with its versions; these charts need none of that.
 * The same numbers give the same bytes: no dates, random ids or measured text widths in here.
 */

/** Colours of the Okabe-Ito palette (readable with the common colour-vision deficiencies). */
export const COLORS = {
  blue: '#0072B2',
  sky: '#56B4E9',
  orange: '#E69F00',
  vermilion: '#D55E00',
  green: '#009E73',
  purple: '#CC79A7',
  grey: '#8C8C8C',
  darkGrey: '#4D4D4D',
}

const FONT = 'font-family="Helvetica, Arial, sans-serif"'
/** An estimate of the width of one character at 12 px: enough to keep labels clear of each other. */
const CHAR_WIDTH = 6.6

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;')
}

/** A number as an attribute: at most two decimals, no trailing zeros, never NaN. */
function n(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`a chart coordinate is ${value}`)
  return String(Math.round(value * 100) / 100)
}

function text(x: number, y: number, content: string, attributes = ''): string {
  return `<text x="${n(x)}" y="${n(y)}"${attributes ? ` ${attributes}` : ''}>${escapeXml(content)}</text>`
}

/** Steps of 1, 2 or 5 times a power of ten, about `count` of them up to `max`. */
function niceTicks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0, 1]
  const rough = max / count
  const power = 10 ** Math.floor(Math.log10(rough))
  const step = [1, 2, 2.5, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= rough)!
  const ticks: number[] = []
  for (let tick = 0; tick < max + step * 1e-9; tick += step) ticks.push(Math.round(tick * 1e6) / 1e6)
  if (ticks.at(-1)! < max) ticks.push(Math.round((ticks.at(-1)! + step) * 1e6) / 1e6)
  return ticks
}

/** A tick's label: thousands separated, decimals only where the step needs them. */
export function formatNumber(value: number): string {
  const decimals = Number.isInteger(value) ? 0 : Math.abs(value) < 10 ? 2 : 1
  const [whole, fraction] = Math.abs(value).toFixed(decimals).split('.')
  const grouped = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  return `${value < 0 ? '-' : ''}${grouped}${fraction ? `.${fraction}` : ''}`
}

/** A measured value at its end of a bar: three significant figures or so (1.23, 12.3, 123, 1,234). */
export function formatValue(value: number): string {
  const magnitude = Math.abs(value)
  const [whole, fraction] = value.toFixed(magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : 2).split('.')
  return `${whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${fraction ? `.${fraction}` : ''}`
}

/** Splits a label into lines of at most `width` characters, at spaces. */
function wrap(label: string, width: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of label.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else {
      line = line ? `${line} ${word}` : word
    }
  }
  if (line) lines.push(line)
  return lines
}

function header(width: number, height: number, title: string, subtitle: string | undefined): string[] {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${n(height)}" viewBox="0 0 ${width} ${n(height)}" role="img" aria-labelledby="chart-title" ${FONT} font-size="12">`,
    `<title id="chart-title">${escapeXml(subtitle ? `${title}. ${subtitle}` : title)}</title>`,
    `<rect x="0" y="0" width="${width}" height="${n(height)}" fill="#ffffff"/>`,
    text(16, 24, title, 'font-size="15" font-weight="bold" fill="#1a1a1a"'),
    ...(subtitle ? [text(16, 42, subtitle, 'fill="#4d4d4d"')] : []),
  ]
}

/** The legend, left to right, wrapping to a new row when the chart's width runs out. */
function legend(
  items: Array<{ label: string; color: string; line?: boolean }>,
  top: number,
  width: number,
): { svg: string[]; bottom: number } {
  const svg: string[] = []
  let x = 16
  let y = top
  for (const item of items) {
    const itemWidth = 22 + item.label.length * CHAR_WIDTH + 18
    if (x > 16 && x + itemWidth > width - 16) {
      x = 16
      y += 18
    }
    svg.push(
      item.line
        ? `<line x1="${n(x)}" y1="${n(y - 4)}" x2="${n(x + 16)}" y2="${n(y - 4)}" stroke="${item.color}" stroke-width="2.5"/>`
        : `<rect x="${n(x)}" y="${n(y - 10)}" width="12" height="12" fill="${item.color}"/>`,
      text(x + 20, y, item.label, 'fill="#1a1a1a"'),
    )
    x += itemWidth
  }
  return { svg, bottom: y + 8 }
}

export interface BarSeries {
  key: string
  label: string
  color: string
}

export interface BarGroup {
  label: string
  /** Bars whose series is not in the chart's series, or whose value is missing, are left out. */
  bars: Array<{ series: string; value: number | undefined; note?: string }>
}

/**
 * Horizontal bars, one group per case (its label on the left), one bar per series within it,
 * each with its value (and unit) at its end. The axis starts at zero.
 */
export function barChart(options: {
  title: string
  subtitle?: string
  /** The unit of the values, shown on the axis and after each value. */
  unit: string
  series: BarSeries[]
  groups: BarGroup[]
  width?: number
}): string {
  const width = options.width ?? 800
  const labelWidth = 250
  const valueRoom = 130
  const barHeight = 16
  const barGap = 3
  const groupGap = 16
  const plotLeft = labelWidth + 8
  const plotWidth = width - plotLeft - valueRoom
  const seriesByKey = new Map(options.series.map((series) => [series.key, series]))
  const groups = options.groups
    .map((group) => ({
      label: group.label,
      bars: group.bars.filter((bar) => seriesByKey.has(bar.series) && bar.value !== undefined && Number.isFinite(bar.value)),
    }))
    .filter((group) => group.bars.length > 0)
  const used = options.series.filter((series) => groups.some((group) => group.bars.some((bar) => bar.series === series.key)))
  const top = options.subtitle ? 66 : 48
  const { svg: legendSvg, bottom: legendBottom } = legend(used, top, width)
  const max = Math.max(0, ...groups.flatMap((group) => group.bars.map((bar) => bar.value!)))
  const ticks = niceTicks(max)
  const scaleMax = ticks.at(-1)!
  const x = (value: number) => plotLeft + (value / scaleMax) * plotWidth

  const plotTop = legendBottom + 14
  const body: string[] = []
  let y = plotTop
  for (const group of groups) {
    const groupHeight = Math.max(group.bars.length * (barHeight + barGap) - barGap, 16)
    const lines = wrap(group.label, Math.floor(labelWidth / CHAR_WIDTH) - 2)
    const firstLine = y + groupHeight / 2 - ((lines.length - 1) * 14) / 2 + 4
    lines.forEach((line, index) => body.push(text(labelWidth, firstLine + index * 14, line, 'text-anchor="end" fill="#1a1a1a"')))
    group.bars.forEach((bar, index) => {
      const series = seriesByKey.get(bar.series)!
      const barTop = y + index * (barHeight + barGap)
      const value = bar.value!
      const label = `${formatValue(value)} ${options.unit}${bar.note ? ` ${bar.note}` : ''}`
      body.push(
        `<rect x="${n(plotLeft)}" y="${n(barTop)}" width="${n(Math.max(x(value) - plotLeft, 1))}" height="${barHeight}" fill="${series.color}">` +
          `<title>${escapeXml(`${group.label}, ${series.label}: ${label}`)}</title></rect>`,
        text(x(value) + 4, barTop + barHeight - 4, label, 'fill="#1a1a1a"'),
      )
    })
    y += groupHeight + groupGap
  }
  const plotBottom = y - groupGap + 8
  const axis: string[] = []
  for (const tick of ticks) {
    axis.push(
      `<line x1="${n(x(tick))}" y1="${n(plotTop - 6)}" x2="${n(x(tick))}" y2="${n(plotBottom)}" stroke="#e0e0e0"/>`,
      text(x(tick), plotBottom + 16, formatNumber(tick), 'text-anchor="middle" fill="#4d4d4d"'),
    )
  }
  axis.push(
    `<line x1="${n(plotLeft)}" y1="${n(plotTop - 6)}" x2="${n(plotLeft)}" y2="${n(plotBottom)}" stroke="#1a1a1a"/>`,
    text(plotLeft + plotWidth / 2, plotBottom + 34, options.unit, 'text-anchor="middle" fill="#1a1a1a"'),
  )
  const height = plotBottom + 46
  return [...header(width, height, options.title, options.subtitle), ...legendSvg, ...axis, ...body, '</svg>', ''].join('\n')
}

export interface LineSeries {
  label: string
  color: string
  /** [x, y] pairs, x ascending. */
  points: Array<[number, number]>
}

/**
 * Lines over a shared x axis (e.g. seconds since start), with vertical markers for the phases of
 * a run. The y axis starts at zero, so that a rise reads at its true size.
 */
export function lineChart(options: {
  title: string
  subtitle?: string
  xLabel: string
  yLabel: string
  series: LineSeries[]
  markers?: Array<{ x: number; label: string }>
  width?: number
  height?: number
}): string {
  const width = options.width ?? 800
  const top = options.subtitle ? 66 : 48
  const { svg: legendSvg, bottom: legendBottom } = legend(
    options.series.map((series) => ({ label: series.label, color: series.color, line: true })),
    top,
    width,
  )
  const plotTop = legendBottom + (options.markers?.length ? 36 : 20)
  const plotHeight = (options.height ?? 340) - plotTop - 56
  const plotLeft = 72
  const plotWidth = width - plotLeft - 24
  const points = options.series.flatMap((series) => series.points)
  const xTicks = niceTicks(Math.max(1, ...points.map(([px]) => px)), 8)
  const yTicks = niceTicks(Math.max(0, ...points.map(([, py]) => py)), 5)
  const xMax = xTicks.at(-1)!
  const yMax = yTicks.at(-1)!
  const x = (value: number) => plotLeft + (value / xMax) * plotWidth
  const y = (value: number) => plotTop + plotHeight - (value / yMax) * plotHeight
  const plotBottom = plotTop + plotHeight

  const svg: string[] = [...header(width, plotBottom + 48, options.title, options.subtitle), ...legendSvg]
  for (const tick of yTicks) {
    svg.push(
      `<line x1="${n(plotLeft)}" y1="${n(y(tick))}" x2="${n(plotLeft + plotWidth)}" y2="${n(y(tick))}" stroke="#e0e0e0"/>`,
      text(plotLeft - 6, y(tick) + 4, formatNumber(tick), 'text-anchor="end" fill="#4d4d4d"'),
    )
  }
  for (const tick of xTicks) {
    svg.push(
      `<line x1="${n(x(tick))}" y1="${n(plotBottom)}" x2="${n(x(tick))}" y2="${n(plotBottom + 4)}" stroke="#1a1a1a"/>`,
      text(x(tick), plotBottom + 18, formatNumber(tick), 'text-anchor="middle" fill="#4d4d4d"'),
    )
  }
  // A marker's label goes one row up when it would run into the previous one's.
  let previousEnd = -Infinity
  let row = 0
  for (const marker of options.markers ?? []) {
    const at = x(marker.x)
    row = at < previousEnd + 6 ? (row + 1) % 2 : 0
    previousEnd = at + 3 + marker.label.length * CHAR_WIDTH * 0.92
    svg.push(
      `<line x1="${n(at)}" y1="${n(plotTop - 4 - row * 13)}" x2="${n(at)}" y2="${n(plotBottom)}" stroke="#4d4d4d" stroke-dasharray="4 3"/>`,
      text(at + 3, plotTop - 8 - row * 13, marker.label, 'fill="#4d4d4d" font-size="11"'),
    )
  }
  for (const series of options.series) {
    if (series.points.length === 0) continue
    const path = series.points.map(([px, py]) => `${n(x(px))},${n(y(py))}`).join(' ')
    svg.push(`<polyline points="${path}" fill="none" stroke="${series.color}" stroke-width="2" stroke-linejoin="round"/>`)
  }
  svg.push(
    `<line x1="${n(plotLeft)}" y1="${n(plotBottom)}" x2="${n(plotLeft + plotWidth)}" y2="${n(plotBottom)}" stroke="#1a1a1a"/>`,
    `<line x1="${n(plotLeft)}" y1="${n(plotTop)}" x2="${n(plotLeft)}" y2="${n(plotBottom)}" stroke="#1a1a1a"/>`,
    text(plotLeft + plotWidth / 2, plotBottom + 38, options.xLabel, 'text-anchor="middle" fill="#1a1a1a"'),
    text(
      18,
      plotTop + plotHeight / 2,
      options.yLabel,
      `text-anchor="middle" fill="#1a1a1a" transform="rotate(-90 18 ${n(plotTop + plotHeight / 2)})"`,
    ),
    '</svg>',
    '',
  )
  return svg.join('\n')
}
