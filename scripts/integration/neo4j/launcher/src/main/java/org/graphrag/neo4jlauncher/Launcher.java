package org.graphrag.neo4jlauncher;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.io.ByteUnit;
import org.neo4j.kernel.api.procedure.GlobalProcedures;
import org.neo4j.kernel.internal.GraphDatabaseAPI;
import org.neo4j.procedure.Procedure;
import org.neo4j.procedure.UserAggregationFunction;
import org.neo4j.procedure.UserFunction;

/**
 * Runs an embedded Neo4j Community DBMS with the Bolt connector on 127.0.0.1 for
 * the graphrag integration tests, and registers the OpenGDS procedures when their
 * jars are on the class path.
 *
 * <p>Embedded Neo4j loads procedures only from a plugins directory, and the GDS
 * extension (a kernel extension found through ServiceLoader) must share the class
 * loader of the procedures it serves. So the launcher puts everything on one class
 * path and registers every class of the org.neo4j.gds jars that declares a
 * procedure or function, which is what the server does for plugin jars.
 *
 * <p>Usage: Launcher DATA_DIR PORT READY_FILE. PORT 0 picks a free port. Once
 * Bolt listens, the procedures are registered and gds.version() answers, the
 * launcher writes "port=P gds=N" (N procedure classes) to READY_FILE atomically;
 * it stops the DBMS cleanly on SIGTERM.
 */
public final class Launcher {
    private Launcher() {}

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable t) {
            // Neo4j's threads would keep a failed JVM alive; exit runs the shutdown hook.
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static void run(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: Launcher DATA_DIR PORT READY_FILE");
            System.exit(2);
        }
        Path data = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        if (port == 0) {
            // Neo4j cannot report a port it picked itself; the window between closing
            // this socket and Bolt binding it is tiny on a test machine.
            try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                port = probe.getLocalPort();
            }
        }
        Path ready = Path.of(args[2]).toAbsolutePath();
        PrintStream log = System.err;

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(data)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                // Loopback only, throwaway data: the tests connect without credentials.
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.procedure_unrestricted, List.of("gds.*"))
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(256))
                .setConfig(GraphDatabaseSettings.transaction_timeout, Duration.ofMinutes(10))
                .build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            log.println("neo4j-launcher: shutting down");
            dbms.shutdown();
            stopped.countDown();
        }, "neo4j-launcher-shutdown"));

        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        GlobalProcedures procedures = ((GraphDatabaseAPI) db).getDependencyResolver()
                .resolveDependency(GlobalProcedures.class);
        int registered = registerGds(procedures, log);
        log.printf("neo4j-launcher: bolt on 127.0.0.1:%d, %d GDS procedure classes registered%n", port, registered);
        if (registered > 0) {
            String version = db.executeTransactionally("CALL gds.version() YIELD gdsVersion RETURN gdsVersion",
                    Map.of(), r -> String.valueOf(r.next().get("gdsVersion")));
            log.printf("neo4j-launcher: GDS %s answers%n", version);
        }

        Path tmp = ready.resolveSibling(ready.getFileName() + ".tmp");
        Files.writeString(tmp, "port=" + port + " gds=" + registered + "\n", StandardCharsets.UTF_8);
        Files.move(tmp, ready, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        stopped.await();
    }

    /** Registers the procedures and functions of every org.neo4j.gds jar on the class path. */
    private static int registerGds(GlobalProcedures procedures, PrintStream log) throws IOException {
        ClassLoader loader = Launcher.class.getClassLoader();
        int classes = 0;
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String name = new File(entry).getName();
            // start.sh copies jars with their group id prepended (dependency:copy-dependencies prependGroupId).
            if (!name.startsWith("org.neo4j.gds.") || !name.endsWith(".jar")) {
                continue;
            }
            try (JarFile jar = new JarFile(entry)) {
                for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                    String path = e.nextElement().getName();
                    if (!path.startsWith("org/neo4j/gds/") || !path.endsWith(".class") || path.contains("$")) {
                        continue;
                    }
                    String cls = path.substring(0, path.length() - ".class".length()).replace('/', '.');
                    if (register(procedures, loader, cls, log)) {
                        classes++;
                    }
                }
            }
        }
        return classes;
    }

    private static boolean register(GlobalProcedures procedures, ClassLoader loader, String name, PrintStream log) {
        Class<?> cls;
        boolean proc = false, func = false, agg = false;
        try {
            cls = Class.forName(name, false, loader);
            for (Method m : cls.getDeclaredMethods()) {
                proc |= m.isAnnotationPresent(Procedure.class);
                func |= m.isAnnotationPresent(UserFunction.class);
                agg |= m.isAnnotationPresent(UserAggregationFunction.class);
            }
        } catch (Throwable t) {
            // Classes whose optional dependencies are absent cannot declare procedures we need.
            return false;
        }
        if (!proc && !func && !agg) {
            return false;
        }
        List<String> failures = new ArrayList<>();
        try {
            if (proc) procedures.registerProcedure(cls);
        } catch (Exception e) {
            failures.add("procedures: " + e.getMessage());
        }
        try {
            if (func) procedures.registerFunction(cls);
        } catch (Exception e) {
            failures.add("functions: " + e.getMessage());
        }
        try {
            if (agg) procedures.registerAggregationFunction(cls);
        } catch (Exception e) {
            failures.add("aggregations: " + e.getMessage());
        }
        for (String f : failures) {
            log.printf("neo4j-launcher: %s %s%n", name, f);
        }
        return failures.isEmpty();
    }
}
