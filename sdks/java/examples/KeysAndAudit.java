// What the key may do, which scope a refused call needed, and the account's latest audit events.
// The audit log needs a key with the scope audit:read; a full key holds every scope.
//
//   FILESHARE_BASE_URL=... FILESHARE_API_KEY=... java -cp <sdk and jackson jars> examples/KeysAndAudit.java
import dev.fileshare.AuditEvent;
import dev.fileshare.AuditEventListParams;
import dev.fileshare.CurrentKey;
import dev.fileshare.FileInfo;
import dev.fileshare.FileUpdate;
import dev.fileshare.FileshareClient;
import dev.fileshare.InsufficientScopeException;
import dev.fileshare.IpNotAllowedException;
import dev.fileshare.UploadOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;

public class KeysAndAudit {
    public static void main(String[] args) {
        try (FileshareClient client = FileshareClient.builder().build()) {
            CurrentKey key = client.key();
            System.out.println("key " + key.prefix() + "… (" + key.name() + ") on the " + key.plan() + " plan holds " + key.scopes()
                    + (key.allowedIps().isEmpty() ? ", usable from anywhere" : ", usable from " + key.allowedIps())
                    + (key.expiresAt() == null ? ", never expires" : ", expires " + key.expiresAt()));

            Instant start = Instant.now().minusSeconds(1);
            try {
                FileInfo file = client.files().upload("audit me".getBytes(StandardCharsets.UTF_8),
                        UploadOptions.builder().filename("audit-example.txt").build());
                client.files().update(file.fileId(), FileUpdate.builder().expiresIn(Duration.ofDays(1)).build());
                client.files().delete(file.fileId());
                System.out.println("uploaded, updated and deleted file " + file.fileId());
            } catch (InsufficientScopeException e) {
                // Nothing was done; the call is not retried. Use a key that holds the scope.
                System.out.println("this key lacks the scope " + e.requiredScope());
            }

            try {
                // Newest first, 20 a request, this run's file events only.
                AuditEventListParams params = AuditEventListParams.builder().action("file.*").since(start).limit(20).build();
                for (AuditEvent e : client.auditEvents().iterate(params)) {
                    System.out.println("event " + e.eventId() + " " + e.at() + " " + e.action() + " by " + e.actor().type()
                            + " " + e.actor().name() + " from " + e.ip() + " " + e.details());
                }
            } catch (InsufficientScopeException e) {
                System.out.println("the audit log needs the scope " + e.requiredScope());
            }
        } catch (IpNotAllowedException e) {
            System.out.println("this key may not be used from this address: " + e.getMessage());
        }
    }
}
