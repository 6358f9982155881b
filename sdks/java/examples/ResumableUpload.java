// Resumable upload of a large file (tus): chunks of 16 MiB, each with its SHA-256; a dropped
// connection is resumed where the server stands. Files of 64 MiB or more take this path on their
// own; resumable(true) forces it.
//
//   FILESHARE_BASE_URL=... FILESHARE_API_KEY=... java -cp <sdk and jackson jars> examples/ResumableUpload.java big.iso
import dev.fileshare.FileInfo;
import dev.fileshare.FileshareClient;
import dev.fileshare.UploadOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

public class ResumableUpload {
    public static void main(String[] args) throws Exception {
        Path path;
        if (args.length > 0) {
            path = Path.of(args[0]);
        } else {
            path = Files.createTempFile("resumable-", ".bin");
            Files.write(path, new byte[3 * 1024 * 1024]);
        }
        try (FileshareClient client = FileshareClient.builder()
                .maxRetries(5)                     // resumes in a row before giving up
                .timeout(Duration.ofSeconds(30))   // idle timeout, never a deadline for the whole file
                .chunkSize(8 * 1024 * 1024)        // keep chunks below any proxy's body limit
                .build()) {
            System.out.println("server offers resumable uploads: " + client.supportsResumableUploads());
            long size = Files.size(path);
            FileInfo file = client.files().upload(path, UploadOptions.builder()
                    .resumable(true)
                    .onProgress((sent, total) -> System.out.printf("\r%5.1f %%", 100.0 * sent / Math.max(1, total)))
                    .build());
            System.out.println();
            System.out.println("stored " + size + " bytes as file " + file.fileId() + ", sha256 " + file.sha256());
            if (args.length == 0) {
                client.files().delete(file.fileId());
                Files.deleteIfExists(path);
            }
        }
    }
}
