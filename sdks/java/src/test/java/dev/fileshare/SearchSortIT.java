package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * files().list(FileListParams) and files().iterate(FileListParams) with q, sort and order against the
 * real server, on an account of their own (so that the listing holds only these five files): the
 * search (any case), each sort in both directions with its ties, iterate across pages with the same
 * query on every request (by before_id in upload order, by page number otherwise), and the 400s.
 */
class SearchSortIT {
    /** In upload order: name, size, downloads. */
    record Stored(String name, int size, int downloads) {}

    static final List<Stored> FILES = List.of(
            new Stored("Beta-report.txt", 30, 0),
            new Stored("alpha.TXT", 10, 1),
            new Stored("gamma_report.csv", 50, 0),
            new Stored("delta.txt", 20, 2),
            new Stored("REPORT-epsilon.pdf", 40, 0));

    static TestServer server;
    static String key;
    static FileshareClient client;
    static Recorder recorder;

    /** A forwarder in front of the server that notes the query of every request going through it. */
    static final class Recorder implements AutoCloseable {
        final List<String> queries = new CopyOnWriteArrayList<>();
        private final HttpServer http;
        private final HttpClient upstream = HttpClient.newHttpClient();

        Recorder(String serverUrl) throws IOException {
            http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            http.createContext("/", exchange -> {
                URI uri = exchange.getRequestURI();
                queries.add(uri.getRawQuery() == null ? "" : uri.getRawQuery());
                try {
                    HttpRequest.Builder forward = HttpRequest.newBuilder(URI.create(serverUrl + uri))
                            .method(exchange.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(exchange.getRequestBody().readAllBytes()));
                    for (String name : List.of("Authorization", "Accept", "Content-Type")) {
                        String value = exchange.getRequestHeaders().getFirst(name);
                        if (value != null) forward.header(name, value);
                    }
                    HttpResponse<byte[]> answer = upstream.send(forward.build(), HttpResponse.BodyHandlers.ofByteArray());
                    answer.headers().firstValue("content-type").ifPresent(type -> exchange.getResponseHeaders().set("Content-Type", type));
                    exchange.sendResponseHeaders(answer.statusCode(), answer.body().length == 0 ? -1 : answer.body().length);
                    try (OutputStream out = exchange.getResponseBody()) {
                        out.write(answer.body());
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    exchange.close();
                }
            });
            http.start();
        }

        String baseUrl() {
            return "http://127.0.0.1:" + http.getAddress().getPort() + "/api/v1";
        }

        /** The parameters of the i-th query noted. */
        Map<String, String> params(int i) {
            Map<String, String> params = new HashMap<>();
            for (String pair : queries.get(i).split("&")) {
                if (pair.isEmpty()) continue;
                String[] kv = pair.split("=", 2);
                params.put(kv[0], URLDecoder.decode(kv.length > 1 ? kv[1] : "", StandardCharsets.UTF_8));
            }
            return params;
        }

        @Override
        public void close() {
            http.stop(0);
        }
    }

    @BeforeAll
    static void start() throws IOException {
        server = TestServer.get();
        key = server.createAccount("java-search-sort", "pro");
        client = FileshareClient.builder().baseUrl(server.baseUrl).apiKey(key).build();
        Path folder = Files.createTempDirectory("fileshare-java-search-sort");
        for (Stored stored : FILES) {
            FileInfo file = client.files().upload("x".repeat(stored.size()).getBytes(StandardCharsets.UTF_8),
                    UploadOptions.builder().filename(stored.name()).build());
            for (int n = 0; n < stored.downloads(); n++) client.download(file, folder.resolve(n + "-" + stored.name()));
        }
        recorder = new Recorder(server.serverUrl);
    }

    @AfterAll
    static void stop() {
        client.close();
        recorder.close();
    }

    static List<String> names(FileList list) {
        return list.files().stream().map(FileInfo::filename).toList();
    }

    static FileList list(FileListParams.Builder params) {
        return client.files().list(params.build());
    }

    @Test
    void qListsTheNamesContainingItInAnyCase() {
        FileList found = list(FileListParams.builder().q("rEpOrT"));
        assertEquals(List.of("REPORT-epsilon.pdf", "gamma_report.csv", "Beta-report.txt"), names(found));
        assertEquals(new Pagination(1L, 20, 3, 1, null), found.pagination());
        assertEquals(3, list(FileListParams.builder().q(".txt")).pagination().total());
        assertEquals(List.of(), list(FileListParams.builder().q("nothing like it")).files());
        assertEquals(5, list(FileListParams.builder().q("")).pagination().total(), "an empty q filters nothing");
    }

    @Test
    void eachSortBothWaysTiesByFileId() {
        List<String> byName = List.of("alpha.TXT", "Beta-report.txt", "delta.txt", "gamma_report.csv", "REPORT-epsilon.pdf");
        assertEquals(byName, names(list(FileListParams.builder().sort(FileSort.FILENAME).order(SortOrder.ASC))));
        assertEquals(reversed(byName), names(list(FileListParams.builder().sort(FileSort.FILENAME))));
        List<String> bySize = List.of("gamma_report.csv", "REPORT-epsilon.pdf", "Beta-report.txt", "delta.txt", "alpha.TXT");
        assertEquals(bySize, names(list(FileListParams.builder().sort(FileSort.SIZE).order(SortOrder.DESC))));
        assertEquals(reversed(bySize), names(list(FileListParams.builder().sort(FileSort.SIZE).order(SortOrder.ASC))));
        FileList byDownloads = list(FileListParams.builder().sort(FileSort.DOWNLOAD_COUNT));
        assertEquals(List.of("delta.txt", "alpha.TXT", "REPORT-epsilon.pdf", "gamma_report.csv", "Beta-report.txt"), names(byDownloads));
        assertEquals(List.of(2L, 1L, 0L, 0L, 0L), byDownloads.files().stream().map(FileInfo::downloadCount).toList());
        assertEquals(FILES.stream().map(Stored::name).toList(),
                names(list(FileListParams.builder().sort(FileSort.UPLOAD_DATE).order(SortOrder.ASC))));
    }

    @Test
    void qAndSortWithAPageAndWithBeforeId() {
        FileList second = list(FileListParams.builder().q("REPORT").sort(FileSort.SIZE).order(SortOrder.ASC).limit(2).page(2));
        assertEquals(List.of("gamma_report.csv"), names(second));
        assertEquals(new Pagination(2L, 2, 3, 2, null), second.pagination());
        List<FileInfo> oldestFirst = list(FileListParams.builder().order(SortOrder.ASC)).files();
        FileList after = list(FileListParams.builder().order(SortOrder.ASC).beforeId(oldestFirst.get(1).fileId()).q("report"));
        assertEquals(List.of("gamma_report.csv", "REPORT-epsilon.pdf"), names(after));
        assertNull(after.pagination().page());
        FileList before = list(FileListParams.builder().beforeId(oldestFirst.get(4).fileId()).q("report").limit(1));
        assertEquals(List.of("gamma_report.csv"), names(before));
        assertEquals(oldestFirst.get(2).fileId(), before.pagination().nextBeforeId());
    }

    @Test
    void iterateGivesTheFilesOfOnePageInItsOrderWithTheQueryOnEveryRequest() {
        try (FileshareClient recorded = FileshareClient.builder().baseUrl(recorder.baseUrl()).apiKey(key).build()) {
            for (FileSort sort : FileSort.values()) {
                for (SortOrder order : SortOrder.values()) {
                    String label = sort.value() + " " + order.value();
                    FileListParams query = FileListParams.builder().q("T").sort(sort).order(order).limit(2).build();
                    List<Long> whole = list(FileListParams.builder().q("T").sort(sort).order(order).limit(100)).files().stream()
                            .map(FileInfo::fileId).toList();
                    assertEquals(5, whole.size(), label);
                    recorder.queries.clear();
                    assertEquals(whole, recorded.files().iterate(query).stream().map(FileInfo::fileId).toList(), label);
                    assertEquals(3, recorder.queries.size(), label);
                    List<String> paging = new ArrayList<>();
                    for (int i = 0; i < 3; i++) {
                        Map<String, String> params = recorder.params(i);
                        assertEquals(List.of("T", sort.value(), order.value()), List.of(params.get("q"), params.get("sort"), params.get("order")), label);
                        if (i > 0) paging.add(params.containsKey("before_id") ? "before_id" : params.containsKey("page") ? "page" : "?");
                    }
                    assertEquals(sort == FileSort.UPLOAD_DATE ? List.of("before_id", "before_id") : List.of("page", "page"), paging, label);
                }
            }
        }
    }

    @Test
    void iterateOldestFirstDeletingEachFileSkipsNone() {
        try (FileshareClient fresh = FileshareClient.builder().baseUrl(server.baseUrl).apiKey(server.createAccount("java-search-delete", "pro")).build()) {
            List<Long> uploaded = new ArrayList<>();
            for (int n = 0; n < 7; n++) {
                uploaded.add(fresh.files().upload(new byte[] {(byte) n}, UploadOptions.builder().filename("x-" + n + ".bin").build()).fileId());
            }
            List<Long> seen = new ArrayList<>();
            for (FileInfo file : fresh.files().iterate(FileListParams.builder().order(SortOrder.ASC).q("X-").limit(3).build())) {
                seen.add(file.fileId());
                fresh.files().delete(file.fileId());
            }
            assertEquals(uploaded, seen);
        }
    }

    @Test
    void theServerRefusesBeforeIdWithAnotherSort() {
        BadRequestException e = assertThrows(BadRequestException.class, () -> list(FileListParams.builder().sort(FileSort.SIZE).beforeId(5)));
        assertEquals(400, e.status().orElse(0));
        assertEquals("invalid_parameter", e.code());
        assertTrue(e.getMessage().contains("before_id pages only with sort=upload_date"), e.getMessage());
    }

    static <T> List<T> reversed(List<T> list) {
        List<T> copy = new ArrayList<>(list);
        Collections.reverse(copy);
        return copy;
    }
}
