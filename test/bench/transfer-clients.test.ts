import { describe, expect, it } from 'vitest'
import { curlArgs, parseCurlOutput } from '../../bench/curl-client.js'
import { nginxFileConfig } from '../../bench/nginx-file-server.js'

/* The transfer section's clients and its nginx: what curl is asked to do, and how nginx serves. */

describe('curl as the bench client', () => {
  it('streams a multipart upload from the file, or the raw bytes with -T, never with Expect: 100-continue', () => {
    const multipart = curlArgs({ method: 'POST', file: '/tmp/a.bin', body: 'multipart' }, 'http://h/upload', { authorization: 'Bearer k' })
    expect(multipart).toEqual(
      expect.arrayContaining(['-H', 'Expect:', '-H', 'authorization: Bearer k', '-F', 'file=@/tmp/a.bin;type=application/octet-stream']),
    )
    expect(multipart).not.toContain('--data-binary')
    expect(multipart.at(-1)).toBe('http://h/upload')
    const raw = curlArgs({ method: 'POST', file: '/tmp/a.bin', body: 'raw' }, 'http://h/upload/x')
    expect(raw.join(' ')).toContain('-T /tmp/a.bin -X POST')
    expect(curlArgs({ method: 'GET' }, 'http://h/blob').join(' ')).toContain('-o /dev/null')
  })

  it("reads the body and curl's own figures from its output", () => {
    expect(parseCurlOutput('{"success":true}\n201 1.234567 536871100 17')).toEqual({
      ms: 1234.567,
      status: 201,
      uploaded: 536871100,
      downloaded: 17,
      body: '{"success":true}',
    })
    expect(parseCurlOutput('\n200 0.5 0 536870912')).toMatchObject({ status: 200, downloaded: 536870912, body: '' })
    expect(() => parseCurlOutput('curl: (7) Failed to connect')).toThrow(/unexpected curl output/)
  })
})

describe('nginx, the download ceiling', () => {
  it('serves the folder with sendfile, one worker, no access log; as root only when the bench runs as root', () => {
    const config = nginxFileConfig({ dir: '/tmp/n', root: '/data/objects', port: 8080, asRoot: false })
    expect(config).toContain('sendfile on;')
    expect(config).toContain('worker_processes 1;')
    expect(config).toContain('access_log off;')
    expect(config).toContain('listen 127.0.0.1:8080;')
    expect(config).toContain('location /blob/ { alias /data/objects/; }')
    expect(config).not.toContain('user root')
    expect(nginxFileConfig({ dir: '/tmp/n', root: '/r', port: 1, asRoot: true })).toContain('user root root;')
  })
})
