// Per-call options, a client copy with other options, the raw answer of a call (RateLimit-Remaining),
// what an error carries, and the files as a Stream. Run with FILESHARE_LOG=debug to see each request.
//
//   FILESHARE_BASE_URL=... FILESHARE_API_KEY=... java -cp <sdk and jackson jars> examples/InspectAndTune.java
import dev.fileshare.FileInfo;
import dev.fileshare.FileshareClient;
import dev.fileshare.NotFoundException;
import dev.fileshare.RawResponse;
import dev.fileshare.RequestOptions;
import dev.fileshare.StatsResult;
import dev.fileshare.UploadOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

public class InspectAndTune {
    public static void main(String[] args) {
        try (FileshareClient client = FileshareClient.builder().build()) {
            // One call with its own options: a short timeout, no retries, a header of yours.
            RequestOptions quick = RequestOptions.builder().timeout(Duration.ofSeconds(10)).maxRetries(0)
                    .header("X-Trace", "inspect-example").build();
            FileInfo file = client.files().upload("inspect me".getBytes(StandardCharsets.UTF_8),
                    UploadOptions.builder().filename("inspect.txt").build(), quick);

            // The raw answer of a call: status and headers, with the usual result.
            RawResponse<FileInfo> raw = client.files().withRawResponse().get(file.fileId());
            System.out.println("status " + raw.statusCode() + ", requests left: " + raw.rateLimitRemaining().orElse(-1)
                    + ", request " + raw.requestId().orElse("?") + ", file " + raw.data().filename());
            RawResponse<StatsResult> stats = client.withRawResponse(FileshareClient::stats);
            System.out.println("plan " + stats.data().plan() + ", requests left: " + stats.rateLimitRemaining().orElse(-1));

            // A copy of the client for patient work; the original is unchanged.
            FileshareClient patient = client.withOptions(o -> o.maxRetries(5).timeout(Duration.ofMinutes(2)));
            long count = patient.files().iterate(100).stream().filter(f -> f.filename().endsWith(".txt")).count();
            System.out.println(count + " .txt files; the copy retries " + patient.maxRetries() + " times, the client " + client.maxRetries());

            client.files().delete(file.fileId());
            try {
                client.files().get(file.fileId());
            } catch (NotFoundException e) {
                System.out.println("gone: " + e.status().orElse(0) + " " + e.body().map(b -> b.path("error").path("code").asText()).orElse("?")
                        + ", request id header " + e.headers().firstValue("x-request-id").isPresent());
            }
        }
    }
}
