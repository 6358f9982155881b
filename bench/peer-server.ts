/**
 * The peers a user would pick instead of Fileshare, for the same two transfers: an Express 5 app
 * with Multer 2, as their READMEs set them up. Run as its own process by bench/run.ts, like the
 * bare baseline (bench/baseline-server.ts).
 *
 *   POST /upload       multer({ storage: multer.diskStorage({ destination }) }).single('file'):
 *                      busboy parses the multipart body and the file part is piped to a file
 *                      with fs.createWriteStream (no fsync, no hash, no database); answers 201
 *                      with the stored name and size
 *   GET  /blob/:name   res.download(name, 'bench.bin', { root }): send streams the file with
 *                      fs.createReadStream, with Content-Disposition, ETag, Last-Modified and
 *                      Range / conditional GET support
 *   GET  /json         answers {"success":true} (the readiness probe)
 */
import express from 'express'
import multer from 'multer'

const dir = process.env.PEER_DIR!
const port = Number(process.env.PEER_PORT)

const upload = multer({ storage: multer.diskStorage({ destination: dir }) })
const app = express()

app.get('/json', (_request, response) => {
  response.json({ success: true })
})

app.post('/upload', upload.single('file'), (request, response) => {
  if (!request.file) {
    response.status(400).json({ success: false, error: 'no file part named "file"' })
    return
  }
  response.status(201).json({ success: true, filename: request.file.filename, size: request.file.size })
})

app.get('/blob/:name', (request, response, next) => {
  // send's `root` refuses names that climb out of the folder.
  response.download(request.params.name, 'bench.bin', { root: dir }, (error?: Error) => {
    if (error && !response.headersSent) next(error)
  })
})

app.listen(port, '127.0.0.1')
