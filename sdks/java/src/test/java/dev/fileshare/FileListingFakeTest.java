package dev.fileshare;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * files().list(FileListParams) and files().iterate(FileListParams) with a search, filters and an
 * order (q, type, state, sort, order), against a fake that lists as the server does: the query of every request, and how
 * iterate pages (by before_id in upload order, either direction; by page number in the other orders).
 */
class FileListingFakeTest {
    record Stored(long id, String filename, long size, long downloads) {}

    /** Files 1..n, uploaded in id order, with names, sizes and download counts in other orders. */
    static List<Stored> stored(int n) {
        List<Stored> files = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            files.add(new Stored(i + 1, (char) ('a' + i * 7 % 26) + "-" + (i % 2 == 0 ? "Report" : "photo") + ".txt", i * 5L % n * 10, i * 3L % 4));
        }
        return files;
    }

    static Map<String, String> params(String rawQuery) {
        Map<String, String> params = new HashMap<>();
        if (rawQuery == null) return params;
        for (String pair : rawQuery.split("&")) {
            String[] kv = pair.split("=", 2);
            params.put(URLDecoder.decode(kv[0], StandardCharsets.UTF_8), kv.length > 1 ? URLDecoder.decode(kv[1], StandardCharsets.UTF_8) : "");
        }
        return params;
    }

    /**
     * {@code GET /files} over {@code files} as the server answers it: q (any case), sort, order (ties
     * by id in the same direction), page or before_id; before_id (the files past it in id order) only
     * in upload order, else 400 invalid_parameter. Returns the status and the body.
     */
    static Map.Entry<Integer, String> listing(List<Stored> files, Map<String, String> params) {
        int limit = Integer.parseInt(params.getOrDefault("limit", "20"));
        String sort = params.getOrDefault("sort", "upload_date");
        boolean descending = params.getOrDefault("order", "desc").equals("desc");
        String q = params.containsKey("q") ? params.get("q").toLowerCase() : null;
        Long before = params.containsKey("before_id") ? Long.valueOf(params.get("before_id")) : null;
        if (before != null && !sort.equals("upload_date")) return Map.entry(400, FakeServer.error("invalid_parameter", "no"));
        Comparator<Stored> bySort = switch (sort) {
            case "filename" -> Comparator.comparing((Stored f) -> f.filename().toLowerCase());
            case "size" -> Comparator.comparingLong(Stored::size);
            case "download_count" -> Comparator.comparingLong(Stored::downloads);
            default -> Comparator.comparingLong(Stored::id);
        };
        Comparator<Stored> order = bySort.thenComparingLong(Stored::id);
        List<Stored> matching = files.stream()
                .filter(f -> q == null || f.filename().toLowerCase().contains(q))
                .sorted(descending ? order.reversed() : order)
                .toList();
        Integer page = null;
        List<Stored> rest;
        if (before != null) {
            rest = matching.stream().filter(f -> descending ? f.id() < before : f.id() > before).toList();
        } else {
            page = Integer.valueOf(params.getOrDefault("page", "1"));
            rest = matching.subList(Math.min(matching.size(), (page - 1) * limit), matching.size());
        }
        List<Stored> shown = rest.subList(0, Math.min(limit, rest.size()));
        ObjectNode body = Json.MAPPER.createObjectNode().put("success", true);
        ArrayNode array = body.putArray("files");
        for (Stored f : shown) {
            array.addObject().put("file_id", f.id()).put("filename", f.filename()).put("size", f.size())
                    .put("upload_date", "2026-11-22 00:17:19").put("download_count", f.downloads())
                    .put("public_link", "http://x/download/t" + f.id()).put("content_type", "text/plain").put("sha256", "0".repeat(64));
        }
        ObjectNode pagination = body.putObject("pagination");
        pagination.put("page", page).put("limit", limit).put("total", matching.size()).put("pages", (matching.size() + limit - 1) / limit);
        if (rest.size() > limit) pagination.put("next_before_id", shown.get(limit - 1).id());
        else pagination.putNull("next_before_id");
        return Map.entry(200, body.toString());
    }

    static FakeServer server(List<Stored> files) throws IOException {
        return new FakeServer((HttpExchange ex, int n) -> {
            var answer = listing(files, params(ex.getRequestURI().getRawQuery()));
            FakeServer.json(ex, answer.getKey(), answer.getValue());
        });
    }

    static List<String> queries(FakeServer fake) {
        return fake.requests.stream().map(r -> r.path().replace("/api/v1/files", "")).toList();
    }

    static List<Long> ids(Iterable<FileInfo> files) {
        List<Long> ids = new ArrayList<>();
        for (FileInfo f : files) ids.add(f.fileId());
        return ids;
    }

    @Test
    void theEnumsHoldTheApisValues() {
        assertEquals(List.of("upload_date", "filename", "size", "download_count"), Stream.of(FileSort.values()).map(FileSort::value).toList());
        assertEquals(List.of("asc", "desc"), Stream.of(SortOrder.values()).map(SortOrder::value).toList());
    }

    @Test
    void listSendsQSortAndOrderWithPageAndLimitAndNothingUnasked() throws Exception {
        try (FakeServer fake = server(stored(5)); FileshareClient client = fake.client().build()) {
            client.files().list(FileListParams.none());
            FileList list = client.files().list(FileListParams.builder().page(2).limit(2).q("Report").sort(FileSort.SIZE).order(SortOrder.ASC).build());
            client.files().list(FileListParams.builder().q("50% off & more").build());
            client.files().withRawResponse().list(FileListParams.builder().beforeId(2).limit(2).order(SortOrder.ASC).build());
            client.files().listAsync(FileListParams.builder().sort(FileSort.DOWNLOAD_COUNT).build()).get();
            assertEquals(List.of("", "?page=2&limit=2&q=Report&sort=size&order=asc", "?q=50%25+off+%26+more",
                    "?before_id=2&limit=2&order=asc", "?sort=download_count"), queries(fake));
            assertEquals(2, list.pagination().page());
            assertEquals(3, list.pagination().total());
        }
    }

    static Stream<Arguments> orders() {
        return Stream.of(FileSort.values()).flatMap(s -> Stream.of(SortOrder.values()).map(o -> Arguments.of(s, o)));
    }

    @ParameterizedTest
    @MethodSource("orders")
    void iterateYieldsEveryMatchOnceInOrderWithTheQueryOnEveryPage(FileSort sort, SortOrder order) throws Exception {
        List<Stored> files = stored(23);
        try (FakeServer fake = server(files); FileshareClient client = fake.client().build()) {
            FileListParams params = FileListParams.builder().limit(5).q("REPORT").sort(sort).order(order).build();
            List<Long> ids = ids(client.files().iterate(params));
            var everything = Json.MAPPER.readTree(listing(files, Map.of("limit", "100", "q", "REPORT", "sort", sort.value(), "order", order.value())).getValue());
            List<Long> expected = new ArrayList<>();
            everything.path("files").forEach(f -> expected.add(f.path("file_id").asLong()));
            assertEquals(12, expected.size());
            assertEquals(expected, ids);
            List<String> sent = queries(fake);
            assertEquals(3, sent.size());
            String tail = "&q=REPORT&sort=" + sort.value() + "&order=" + order.value();
            for (String query : sent) assertTrue(query.endsWith(tail), query);
            if (sort == FileSort.UPLOAD_DATE) {
                for (String query : sent.subList(1, 3)) assertTrue(query.matches("\\?before_id=\\d+&limit=5&.*"), "upload order pages by before_id: " + query);
            } else {
                assertEquals(List.of("?page=2&limit=5" + tail, "?page=3&limit=5" + tail), sent.subList(1, 3));
            }
            assertEquals(expected, ids(client.files().iterate(params)), "a second iteration starts again");
        }
    }

    @Test
    void iterateOldestFirstPagesByBeforeIdGoingUp() throws Exception {
        try (FakeServer fake = server(stored(5)); FileshareClient client = fake.client().build()) {
            assertEquals(List.of(1L, 2L, 3L, 4L, 5L), ids(client.files().iterate(FileListParams.builder().limit(2).order(SortOrder.ASC).build())));
            assertEquals(List.of("?limit=2&order=asc", "?before_id=2&limit=2&order=asc", "?before_id=4&limit=2&order=asc"), queries(fake));
        }
    }

    @Test
    void iterateOldestFirstStopsWhenNextBeforeIdDoesNotGoUp() throws Exception {
        String[] pages = {"[1,2],2", "[3,4],4", "[5,6],3"};
        try (FakeServer fake = new FakeServer((ex, n) -> {
            String[] page = pages[Math.min(n, 3) - 1].split("],");
            StringBuilder files = new StringBuilder();
            for (String id : page[0].substring(1).split(",")) files.append(files.length() == 0 ? "" : ",").append(FakeServer.file(Long.parseLong(id), "0".repeat(64), 1, "l"));
            FakeServer.json(ex, 200, "{\"success\":true,\"files\":[" + files + "],\"pagination\":{\"page\":null,\"limit\":2,\"total\":9,\"pages\":5,"
                    + "\"next_before_id\":" + page[1] + "}}");
        });
             FileshareClient client = fake.client().build()) {
            Iterator<FileInfo> it = client.files().iterate(FileListParams.builder().limit(2).order(SortOrder.ASC).build()).iterator();
            List<Long> seen = new ArrayList<>();
            FileshareException e = assertThrows(FileshareException.class, () -> it.forEachRemaining(f -> seen.add(f.fileId())));
            assertTrue(e.getMessage().contains("next_before_id 3 does not go above 4"), e.getMessage());
            assertEquals(List.of(1L, 2L, 3L, 4L), seen, "the page that does not move on is not yielded");
        }
    }

    @Test
    void iterateByPageNumberYieldsAShiftedFileOnce() throws Exception {
        String[] pages = {"4,2", "2,5", "1"};
        try (FakeServer fake = new FakeServer((ex, n) -> {
            StringBuilder files = new StringBuilder();
            for (String id : pages[n - 1].split(",")) files.append(files.length() == 0 ? "" : ",").append(FakeServer.file(Long.parseLong(id), "0".repeat(64), 1, "l"));
            FakeServer.json(ex, 200, "{\"success\":true,\"files\":[" + files + "],\"pagination\":{\"page\":" + n + ",\"limit\":2,\"total\":5,\"pages\":3,"
                    + "\"next_before_id\":null}}");
        });
             FileshareClient client = fake.client().build()) {
            assertEquals(List.of(4L, 2L, 5L, 1L), ids(client.files().iterate(FileListParams.builder().limit(2).sort(FileSort.FILENAME).build())));
            assertEquals(List.of("?limit=2&sort=filename", "?page=2&limit=2&sort=filename", "?page=3&limit=2&sort=filename"), queries(fake));
        }
    }

    @Test
    void iterateRefusesAPageOrABeforeIdBeforeSending() throws Exception {
        try (FakeServer fake = server(stored(5)); FileshareClient client = fake.client().build()) {
            assertThrows(ConfigurationException.class, () -> client.files().iterate(FileListParams.builder().page(2).build()));
            assertThrows(ConfigurationException.class, () -> client.files().iterate(FileListParams.builder().beforeId(9).build()));
            assertEquals(List.of(), fake.requests);
            assertEquals(List.of(), ids(client.files().iterate(FileListParams.builder().q("nothing like it").sort(FileSort.SIZE).build())));
            assertEquals(List.of("?limit=100&q=nothing+like+it&sort=size"), queries(fake));
        }
    }

    @Test
    void theStateEnumHoldsTheApisValues() {
        assertEquals(List.of("expiring", "expired_links", "from_upload_request"), Stream.of(FileState.values()).map(FileState::value).toList());
    }

    @Test
    void listSendsTypeAndStateOnceOrRepeatedWithTheOtherParameters() throws Exception {
        try (FakeServer fake = server(stored(5)); FileshareClient client = fake.client().build()) {
            client.files().list(FileListParams.builder().type("image").build());
            client.files().list(FileListParams.builder().state(FileState.EXPIRING).build());
            client.files().list(FileListParams.builder().type(List.of("application/pdf", "text"))
                    .state(FileState.EXPIRED_LINKS, FileState.FROM_UPLOAD_REQUEST).build());
            client.files().list(FileListParams.builder().type(List.of()).state().build()); // empty: nothing sent
            client.files().withRawResponse().list(FileListParams.builder().page(2).limit(2).q("Report").sort(FileSort.SIZE).order(SortOrder.ASC)
                    .type("text/plain").state(FileState.EXPIRING).build());
            client.files().listAsync(FileListParams.builder().beforeId(4).limit(2).q("a").type("image", "video")
                    .state(List.of(FileState.EXPIRING, FileState.EXPIRED_LINKS)).build()).get();
            assertEquals(List.of("?type=image", "?state=expiring", "?type=application%2Fpdf&type=text&state=expired_links&state=from_upload_request", "",
                    "?page=2&limit=2&q=Report&sort=size&order=asc&type=text%2Fplain&state=expiring",
                    "?before_id=4&limit=2&q=a&type=image&type=video&state=expiring&state=expired_links"), queries(fake));
        }
    }

    @Test
    void iterateKeepsTypeAndStateOnEveryPageByBeforeIdOrPage() throws Exception {
        String kept = "type=image&type=application%2Fpdf&state=expiring&state=from_upload_request";
        FileListParams.Builder filters = FileListParams.builder().limit(2).q("o").type("image", "application/pdf")
                .state(FileState.EXPIRING, FileState.FROM_UPLOAD_REQUEST);
        try (FakeServer fake = server(stored(3)); FileshareClient client = fake.client().build()) {
            assertEquals(List.of(3L, 2L, 1L), ids(client.files().iterate(filters.build())));
            assertEquals(List.of("?limit=2&q=o&" + kept, "?before_id=2&limit=2&q=o&" + kept), queries(fake));
        }
        try (FakeServer fake = server(stored(3)); FileshareClient client = fake.client().build()) {
            assertEquals(3, ids(client.files().iterate(filters.sort(FileSort.SIZE).build())).size());
            assertEquals(List.of("?limit=2&q=o&sort=size&" + kept, "?page=2&limit=2&q=o&sort=size&" + kept), queries(fake));
        }
    }

    @Test
    void aNullTypeOrStateIsRefused() {
        assertThrows(ConfigurationException.class, () -> FileListParams.builder().type("image", null));
        assertThrows(ConfigurationException.class, () -> FileListParams.builder().state(FileState.EXPIRING, null));
    }
}
