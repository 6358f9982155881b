// The CompletableFuture variants: several calls in flight at once.
//
//   FILESHARE_BASE_URL=... FILESHARE_API_KEY=... java -cp <sdk and jackson jars> examples/AsyncCalls.java
import dev.fileshare.FileInfo;
import dev.fileshare.FileshareClient;
import dev.fileshare.UploadOptions;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

public class AsyncCalls {
    public static void main(String[] args) {
        try (FileshareClient client = FileshareClient.builder().build()) {
            List<CompletableFuture<FileInfo>> uploads = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                byte[] bytes = ("note " + i).getBytes(StandardCharsets.UTF_8);
                uploads.add(client.files().uploadAsync(new ByteArrayInputStream(bytes),
                        UploadOptions.builder().filename("note-" + i + ".txt").size(bytes.length).build()));
            }
            CompletableFuture.allOf(uploads.toArray(CompletableFuture[]::new)).join();
            client.statsAsync().thenAccept(s -> System.out.println("files now: " + s.stats().totalFiles())).join();
            for (CompletableFuture<FileInfo> upload : uploads) {
                FileInfo file = upload.join();
                System.out.println("uploaded " + file.filename() + " (" + file.fileId() + ")");
                client.files().deleteAsync(file.fileId()).join();
            }
        }
    }
}
