package dev.fileshare;

import java.nio.file.Path;

/**
 * A separate process for {@link ResumeAcrossProcessesIT}: starts a resumable upload of a file,
 * prints its URL as soon as it exists ({@code URL …}), then each confirmed offset ({@code AT …}),
 * and once the server has {@code stopAfter} bytes stops forever ({@code STALLED}), to be killed.
 * Configured by {@code FILESHARE_BASE_URL} and {@code FILESHARE_API_KEY}.
 */
final class UploadWorker {
    private UploadWorker() {}

    public static void main(String[] args) throws Exception {
        Path path = Path.of(args[0]);
        int chunkSize = Integer.parseInt(args[1]);
        long stopAfter = Long.parseLong(args[2]);
        Thread caller = Thread.currentThread();
        try (FileshareClient client = FileshareClient.builder().build()) {
            client.files().upload(path, UploadOptions.builder()
                    .resumable(true)
                    .chunkSize(chunkSize)
                    .onUploadCreated(url -> System.out.println("URL " + url))
                    .onProgress((sent, total) -> {
                        // Offsets the server confirmed are reported on the calling thread (the
                        // bytes handed to the socket, on the HTTP client's).
                        if (Thread.currentThread() != caller) return;
                        System.out.println("AT " + sent);
                        if (sent >= stopAfter) {
                            System.out.println("STALLED");
                            System.out.flush();
                            try {
                                Thread.sleep(Long.MAX_VALUE);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                    })
                    .build());
            System.out.println("FINISHED"); // never reached: the test kills this process first
        }
    }
}
