// What the SDK's exceptions carry, and which ones to wait out.
//
//   FILESHARE_BASE_URL=... FILESHARE_API_KEY=... java -cp <sdk and jackson jars> examples/ErrorHandling.java
import dev.fileshare.APIConnectionException;
import dev.fileshare.AuthenticationException;
import dev.fileshare.FileshareClient;
import dev.fileshare.FileshareException;
import dev.fileshare.LimitExceededException;
import dev.fileshare.NotFoundException;
import dev.fileshare.RateLimitException;

public class ErrorHandling {
    public static void main(String[] args) {
        try (FileshareClient client = FileshareClient.builder().build()) {
            try {
                client.files().get(9_007_199_254_740_991L);
            } catch (NotFoundException e) {
                System.out.println("not found: status " + e.status().orElse(0) + ", code " + e.code() + ", request " + e.requestId());
            }
            try {
                client.files().upload("hello".getBytes(), null);
            } catch (LimitExceededException e) {
                // file_too_large, daily_upload_limit_exceeded (clears at 00:00 UTC) or storage_quota_exceeded
                // (delete files first): waiting does not help
                System.out.println("limit: " + e.code());
            } catch (RateLimitException e) {
                // already retried maxRetries times, or the server asked for a wait over 60 s: wait before trying again
                System.out.println("slow down: retry in " + e.retryAfter().map(d -> d.toSeconds() + " s").orElse("a while") + " (limit " + e.rateLimit().limit() + ")");
            } catch (AuthenticationException e) {
                System.out.println("check FILESHARE_API_KEY: " + e.getMessage());
            } catch (APIConnectionException e) {
                System.out.println("no answer from the server: " + e.getMessage());
            } catch (FileshareException e) {
                System.out.println("other error: " + e.getMessage());
            }
        }
    }
}
