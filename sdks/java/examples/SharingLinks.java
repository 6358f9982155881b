// Sharing a file with links: an upload that expires in a week, a second link limited to three
// downloads and protected by a password, a download through it, then rotate and revoke.
//
//   FILESHARE_BASE_URL=... FILESHARE_API_KEY=... java -cp <sdk and jackson jars> examples/SharingLinks.java
import dev.fileshare.AuthenticationException;
import dev.fileshare.DownloadOptions;
import dev.fileshare.FileInfo;
import dev.fileshare.FileUpdate;
import dev.fileshare.FileshareClient;
import dev.fileshare.Link;
import dev.fileshare.LinkOptions;
import dev.fileshare.LinkUpdate;
import dev.fileshare.NotFoundException;
import dev.fileshare.UploadOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

public class SharingLinks {
    public static void main(String[] args) throws Exception {
        String password = "a passphrase for the auditors"; // in real use: read it, never hard-code it
        try (FileshareClient client = FileshareClient.builder().build()) {
            FileInfo file = client.files().upload("quarterly figures\n".getBytes(StandardCharsets.UTF_8),
                    UploadOptions.builder().filename("report.txt").expiresIn(Duration.ofDays(7)).build());
            System.out.println("uploaded file " + file.fileId() + ", expires at " + file.expiresAtTime());

            Link link = client.links().create(file.fileId(), LinkOptions.builder()
                    .label("for the auditors")
                    .maxDownloads(3)
                    .password(password)
                    .expiresIn(Duration.ofDays(2))
                    .build());
            System.out.println("link " + link.linkId() + ": " + link.url() + " (" + link.maxDownloads() + " downloads)");
            for (Link l : client.links().list(file.fileId())) {
                System.out.printf("  %-5d %-9s default=%-5s downloads %d/%s  %s%n", l.linkId(), l.status(), l.isDefault(),
                        l.downloadCount(), l.maxDownloads() == null ? "-" : l.maxDownloads(), l.label() == null ? "" : l.label());
            }

            // Downloading it: a POST counts one download and hands out a grant; resuming is free.
            Path copy = Files.createTempFile("sharing-", ".txt");
            try {
                client.download(link.url(), copy);
            } catch (AuthenticationException e) {
                System.out.println("without the password: " + e.code());
            }
            client.download(link.url(), copy, DownloadOptions.builder().password(password).build());
            System.out.println("downloaded with the password; downloads now " + client.links().get(link.linkId()).downloadCount());

            link = client.links().update(link.linkId(), LinkUpdate.builder().clearPassword().maxDownloads(5).build());
            System.out.println("password removed: " + !link.passwordProtected() + ", limit now " + link.maxDownloads());

            String oldUrl = link.url();
            link = client.links().rotate(link.linkId());
            try {
                client.download(oldUrl, Files.createTempFile("sharing-old-", ".txt"));
            } catch (NotFoundException e) {
                System.out.println("rotated: the old URL answers " + e.status().orElse(0));
            }

            client.links().delete(link.linkId());
            System.out.println("revoked link " + link.linkId() + ": " + client.links().get(link.linkId()).status());

            file = client.files().update(file.fileId(), FileUpdate.builder().clearExpiry().build());
            System.out.println("file expiry removed: " + (file.expiresAt() == null));
            client.files().delete(file.fileId());
            Files.deleteIfExists(copy);
        }
    }
}
