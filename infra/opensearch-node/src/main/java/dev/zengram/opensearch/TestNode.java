package dev.zengram.opensearch;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.opensearch.common.settings.Settings;
import org.opensearch.common.unit.TimeValue;
import org.opensearch.core.common.transport.TransportAddress;
import org.opensearch.http.HttpServerTransport;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;

/**
 * A single-node OpenSearch for Zengram's tests, in one JVM, with its plugins loaded from the classpath the
 * way OpenSearch's own single-node tests do (a {@link Node} given plugin classes): the Netty HTTP
 * transport, analysis-common (stemmers, stop words, asciifolding) and k-NN (the lucene engine is pure
 * Java; the faiss/nmslib JNI libraries are not shipped and load only if an index asks for those engines).
 *
 * <p>Binds 127.0.0.1 only (HTTP on the given port, or any free one, and on {@code --http-host} when given;
 * transport on any free one). Once the
 * node answers it writes its URL to the ready file (atomically) and prints {@code ZENGRAM_OPENSEARCH_READY
 * <url>}. It stops on SIGTERM/SIGINT and, with {@code --stop-on-stdin-close}, when its standard input
 * closes, so a test session that dies takes the node with it.
 */
public final class TestNode {
    static final String READY = "ZENGRAM_OPENSEARCH_READY";

    /** By name: k-NN comes from its release zip, unpacked onto the classpath at run time, not compiled against. */
    private static final List<String> PLUGINS = List.of(
        "org.opensearch.transport.Netty4Plugin",
        "org.opensearch.analysis.common.CommonAnalysisPlugin",
        "org.opensearch.knn.plugin.KNNPlugin"
    );

    private TestNode() {}

    /** Node's constructor that takes classpath plugins is protected: this subclass only opens it. */
    private static final class ClasspathNode extends Node {
        ClasspathNode(Settings settings, Collection<Class<? extends Plugin>> plugins) {
            super(InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), null, () -> "zengram-test-node"),
                plugins, true);
        }
    }

    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args);
        Path home = options.home;
        Files.createDirectories(home.resolve("config"));
        Files.createDirectories(home.resolve("data"));
        Files.createDirectories(home.resolve("logs"));

        Node node = new ClasspathNode(settings(home, options.port, options.httpHost), plugins());
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(node), "zengram-node-shutdown"));
        node.start();
        // Ready means writable: the cluster state is recovered and the (empty) cluster is at least yellow.
        node.client().admin().cluster().prepareHealth().setWaitForYellowStatus()
            .setTimeout(TimeValue.timeValueSeconds(60)).get();

        TransportAddress bound = node.injector().getInstance(HttpServerTransport.class).boundAddress().publishAddress();
        String url = "http://" + bound.getAddress() + ":" + bound.getPort();
        if (options.readyFile != null) {
            Path partial = options.readyFile.resolveSibling(options.readyFile.getFileName() + ".partial");
            Files.writeString(partial, url + "\n");
            Files.move(partial, options.readyFile, StandardCopyOption.ATOMIC_MOVE);
        }
        System.out.println(READY + " " + url);
        System.out.flush();

        if (options.stopOnStdinClose) {
            waitForStdinToClose();
            System.exit(0);  // runs the shutdown hook
        }
        Thread.currentThread().join();  // until SIGTERM/SIGINT
    }

    /** {@code --home DIR [--port N] [--http-host HOST] [--ready-file FILE] [--stop-on-stdin-close]} */
    private record Options(Path home, int port, String httpHost, Path readyFile, boolean stopOnStdinClose) {
        static Options parse(String[] args) {
            Path home = null;
            int port = 0;
            String httpHost = "127.0.0.1";
            Path readyFile = null;
            boolean stopOnStdinClose = false;
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--home" -> home = Path.of(args[++i]).toAbsolutePath();
                    case "--port" -> port = Integer.parseInt(args[++i]);
                    case "--http-host" -> httpHost = args[++i];
                    case "--ready-file" -> readyFile = Path.of(args[++i]).toAbsolutePath();
                    case "--stop-on-stdin-close" -> stopOnStdinClose = true;
                    default -> usage("unknown argument " + args[i]);
                }
            }
            if (home == null) {
                usage("--home is required");
            }
            return new Options(home, port, httpHost, readyFile, stopOnStdinClose);
        }

        private static void usage(String problem) {
            System.err.println(problem + "\nusage: TestNode --home DIR [--port N (0: any free port)] "
                + "[--http-host HOST (default 127.0.0.1)] [--ready-file FILE] [--stop-on-stdin-close]");
            System.exit(2);
        }
    }

    private static List<Class<? extends Plugin>> plugins() throws ClassNotFoundException {
        List<Class<? extends Plugin>> found = new ArrayList<>();
        for (String name : PLUGINS) {
            found.add(Class.forName(name).asSubclass(Plugin.class));
        }
        return found;
    }

    static Settings settings(Path home, int port, String httpHost) {
        return Settings.builder()
            .put("cluster.name", "zengram-test")
            .put("node.name", "zengram-test-node")
            .put("path.home", home.toString())
            .put("path.data", home.resolve("data").toString())
            .put("path.logs", home.resolve("logs").toString())
            .put("network.host", "127.0.0.1")
            // HTTP may listen wider (0.0.0.0: containers reach it, `make local-cloud`); the transport stays on
            // loopback, so the production bootstrap checks stay off.
            .put("http.host", httpHost)
            .put("http.port", port == 0 ? "0" : Integer.toString(port))
            .put("transport.port", "0")
            .put("transport.type", "netty4")
            .put("http.type", "netty4")
            .put("discovery.type", "single-node")
            // A test node on a shared machine: no disk watermarks blocking writes, no swapping checks,
            // few threads.
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .put("node.processors", 1)
            .put("indices.memory.index_buffer_size", "16mb")
            .put("search.default_search_timeout", "30s")
            .build();
    }

    private static void waitForStdinToClose() {
        InputStream in = System.in;
        byte[] buffer = new byte[256];
        try {
            while (in.read(buffer) >= 0) {
                // input is ignored; end of stream means the parent went away
            }
        } catch (IOException ignored) {
            // a broken pipe means the same
        }
    }

    private static void stop(Node node) {
        try {
            node.close();
            node.awaitClose(20, TimeUnit.SECONDS);
        } catch (IOException | InterruptedException error) {
            System.err.println("closing the node: " + error);
        }
    }
}
