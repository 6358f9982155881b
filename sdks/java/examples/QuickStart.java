// Quick start: upload a file, list the account's files, download the file again, delete it.
//
//   FILESHARE_BASE_URL=http://localhost:3000/api/v1 FILESHARE_API_KEY=fsk_... \
//     java -cp fileshare-sdk-0.2.0.jar:jackson-databind.jar:jackson-core.jar:jackson-annotations.jar \
//     examples/QuickStart.java [file]
import dev.fileshare.DownloadOptions;
import dev.fileshare.DownloadResult;
import dev.fileshare.FileInfo;
import dev.fileshare.FileshareClient;
import dev.fileshare.UploadOptions;
import java.nio.file.Files;
import java.nio.file.Path;

public class QuickStart {
    public static void main(String[] args) throws Exception {
        Path source;
        if (args.length > 0) {
            source = Path.of(args[0]);
        } else {
            source = Files.createTempFile("quickstart-", ".txt");
            Files.writeString(source, "Hello from the Fileshare Java SDK\n");
        }
        // Base URL and key come from FILESHARE_BASE_URL and FILESHARE_API_KEY.
        try (FileshareClient client = FileshareClient.builder().build()) {
            FileInfo file = client.files().upload(source, UploadOptions.builder()
                    .onProgress((sent, total) -> System.out.printf("sent %d of %d bytes%n", sent, total))
                    .build());
            System.out.println("uploaded " + file.filename() + " as file " + file.fileId() + ": " + file.publicLink());
            System.out.println("sha256 " + file.sha256() + ", uploaded at " + file.uploadedAt());

            for (FileInfo f : client.files().iterate(100)) {
                System.out.printf("%8d  %10d  %s%n", f.fileId(), f.size(), f.filename());
            }

            Path copy = Files.createTempFile("quickstart-copy-", ".bin");
            DownloadResult result = client.download(file, copy, DownloadOptions.builder().resume(false).build());
            System.out.println("downloaded " + result.size() + " bytes to " + copy + ", sha256 " + result.sha256());

            var stats = client.stats();
            System.out.println("plan " + stats.plan() + ": " + stats.stats().totalFiles() + " files, "
                    + stats.stats().uploadsToday() + " of " + stats.limits().dailyUploads() + " uploads today");
            Long quota = stats.limits().maxStorage(); // null: unlimited
            System.out.println("storage: " + stats.stats().totalSize() + " bytes used, " + stats.stats().storageReserved()
                    + " reserved by uploads in progress, quota " + (quota == null ? "unlimited" : quota + " bytes"));

            client.files().delete(file.fileId());
            System.out.println("deleted file " + file.fileId());
            Files.deleteIfExists(copy);
        }
        if (args.length == 0) Files.deleteIfExists(source);
    }
}
