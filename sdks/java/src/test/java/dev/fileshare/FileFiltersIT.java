package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * files().list(FileListParams) and files().iterate(FileListParams) with type and state against the
 * real server, on an account of their own holding one file of each kind: the media types (top-level,
 * exact, any case, several as any of), each state (an expiry; a used-up link, and a revoked one that
 * does not count; a guest's upload through an upload request), the filters with q and a sort, iterate
 * sending them on every request (through SearchSortIT's recording forwarder), and the 400s.
 */
class FileFiltersIT {
    static final byte[] BYTES = "filter me".getBytes(StandardCharsets.UTF_8);

    static TestServer server;
    static String key;
    static FileshareClient client;
    static SearchSortIT.Recorder recorder;

    static FileInfo upload(String name, UploadOptions.Builder options) {
        return client.files().upload(BYTES, options.filename(name).build());
    }

    /** photo.png; scan.jpg (an expiry); report.pdf (its link used up); notes.txt (its link revoked); guest.csv (a guest's): in that order. */
    @BeforeAll
    static void start() throws IOException, InterruptedException {
        server = TestServer.get();
        key = server.createAccount("java-filters", "pro");
        client = FileshareClient.builder().baseUrl(server.baseUrl).apiKey(key).build();
        Path folder = Files.createTempDirectory("fileshare-java-filters");
        upload("photo.png", UploadOptions.builder());
        upload("scan.jpg", UploadOptions.builder().expiresIn(Duration.ofDays(1)));
        FileInfo report = upload("report.pdf", UploadOptions.builder());
        client.download(client.links().create(report.fileId(), LinkOptions.builder().maxDownloads(1).build()).url(), folder.resolve("report.pdf"));
        FileInfo notes = upload("notes.txt", UploadOptions.builder());
        client.links().delete(client.links().create(notes.fileId(), LinkOptions.builder().maxDownloads(1).build()).linkId());
        UploadRequest request = client.uploadRequests().create(UploadRequestCreateParams.builder().label("filters").expiresIn(Duration.ofDays(1)).build());
        assertEquals(201, UploadRequestsIT.guestUpload(request.token(), "guest.csv", BYTES, null).statusCode());
        recorder = new SearchSortIT.Recorder(server.serverUrl);
    }

    @AfterAll
    static void stop() {
        client.close();
        recorder.close();
    }

    static List<String> names(FileListParams.Builder params) {
        return client.files().list(params.build()).files().stream().map(FileInfo::filename).toList();
    }

    @Test
    void typeTopLevelExactAnyCaseAndSeveralAsAnyOf() {
        assertEquals(List.of("scan.jpg", "photo.png"), names(FileListParams.builder().type("image")));
        assertEquals(List.of("photo.png"), names(FileListParams.builder().type("IMAGE/PNG")));
        assertEquals(List.of("guest.csv", "notes.txt", "report.pdf"), names(FileListParams.builder().type(List.of("application/pdf", "text"))));
        assertEquals(List.of("guest.csv"), names(FileListParams.builder().type("text/csv", "text/csv")), "duplicates harmless");
        assertEquals(List.of(), names(FileListParams.builder().type("video")));
    }

    @Test
    void eachStateAndSeveralAsAnyOf() {
        assertEquals(List.of("scan.jpg"), names(FileListParams.builder().state(FileState.EXPIRING)));
        assertEquals(List.of("report.pdf"), names(FileListParams.builder().state(FileState.EXPIRED_LINKS)), "not notes.txt: a revoked link does not count");
        assertEquals(List.of("guest.csv"), names(FileListParams.builder().state(FileState.FROM_UPLOAD_REQUEST)));
        assertEquals(List.of("guest.csv", "scan.jpg"), names(FileListParams.builder().state(FileState.EXPIRING, FileState.FROM_UPLOAD_REQUEST)));
        assertEquals(3, client.files().list(FileListParams.builder().state(FileState.values()).build()).pagination().total());
    }

    @Test
    void filtersWithEachOtherQASortAPageAndBeforeId() {
        assertEquals(List.of("guest.csv"), names(FileListParams.builder().type("text").state(FileState.FROM_UPLOAD_REQUEST)));
        assertEquals(List.of(), names(FileListParams.builder().type("image").state(FileState.EXPIRED_LINKS)));
        assertEquals(List.of("notes.txt", "photo.png"),
                names(FileListParams.builder().type("image", "text").q("O").sort(FileSort.FILENAME).order(SortOrder.ASC)));
        FileList second = client.files().list(FileListParams.builder().type("image", "text").sort(FileSort.FILENAME).limit(2).page(2).build());
        assertEquals(List.of("notes.txt", "guest.csv"), second.files().stream().map(FileInfo::filename).toList());
        assertEquals(new Pagination(2L, 2, 4, 2, null), second.pagination());
        long oldest = client.files().list(FileListParams.builder().order(SortOrder.ASC).build()).files().get(0).fileId();
        assertEquals(List.of("scan.jpg"),
                names(FileListParams.builder().order(SortOrder.ASC).beforeId(oldest).type("image").state(FileState.EXPIRING)));
    }

    @Test
    void iterateGivesTheFilesOfOnePageWithTheFiltersOnEveryRequest() {
        try (FileshareClient recorded = FileshareClient.builder().baseUrl(recorder.baseUrl()).apiKey(key).build()) {
            for (FileSort sort : List.of(FileSort.UPLOAD_DATE, FileSort.FILENAME)) {
                FileListParams.Builder filters = FileListParams.builder().type("text", "application/pdf")
                        .state(FileState.EXPIRED_LINKS, FileState.FROM_UPLOAD_REQUEST).sort(sort);
                List<Long> whole = client.files().list(filters.build()).files().stream().map(FileInfo::fileId).toList();
                assertEquals(2, whole.size(), sort.value());
                recorder.queries.clear();
                assertEquals(whole, recorded.files().iterate(filters.limit(1).build()).stream().map(FileInfo::fileId).toList(), sort.value());
                assertTrue(recorder.queries.size() >= 2, sort.value());
                String paging = sort == FileSort.UPLOAD_DATE ? "before_id=" : "page=";
                for (int i = 0; i < recorder.queries.size(); i++) {
                    String query = recorder.queries.get(i);
                    assertTrue(query.contains("type=text&type=application%2Fpdf&state=expired_links&state=from_upload_request"), query);
                    if (i > 0) assertTrue(query.contains(paging), query);
                }
            }
        }
    }

    @Test
    void theServerRefusesTooManyStatesAndAnUnknownType() {
        // The enum cannot name a state the server does not know: 21 of them are one past its limit.
        BadRequestException states = assertThrows(BadRequestException.class,
                () -> names(FileListParams.builder().state(Collections.nCopies(21, FileState.EXPIRING))));
        assertEquals(400, states.status().orElse(0));
        assertEquals("invalid_parameter", states.code());
        assertTrue(states.getMessage().contains("state must be given at most 20 times, got 21."), states.getMessage());
        BadRequestException type = assertThrows(BadRequestException.class, () -> names(FileListParams.builder().type("image/*")));
        assertEquals("invalid_parameter", type.code());
        assertTrue(type.getMessage().contains("type must be a media type (image) or type/subtype (application/pdf), got \"image/*\"."), type.getMessage());
    }
}
