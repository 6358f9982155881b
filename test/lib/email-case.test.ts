import { describe, expect, it } from 'vitest'
import { foldEmailCase } from '../../src/lib/email-case.js'

describe('foldEmailCase', () => {
  it('folds A-Z only, as the databases compare account emails', () => {
    expect(foldEmailCase('Mixed.Case@Example.TEST')).toBe('mixed.case@example.test')
    expect(foldEmailCase('É@example.test')).toBe('É@example.test')
    expect(foldEmailCase('é@example.test')).toBe('é@example.test')
    expect(foldEmailCase('ẞ.İ@x')).toBe('ẞ.İ@x')
  })
})
