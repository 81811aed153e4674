package io.sluice.ingest.internal;

import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.ingest.IngestConfig;
import io.sluice.ingest.IngestException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The target table as the server describes it, read once at start: server version, the settings it knows
 * ({@code system.settings}) so that Sluice never sends one it would reject, and the table's columns
 * ({@code system.columns}) to validate the configuration against.
 */
public final class ClickHouseTarget {
    private static final Logger LOG = LoggerFactory.getLogger(ClickHouseTarget.class);

    /** Offset columns: when the table has both, the offset-range strategy fills them and uses them to skip rows already landed. */
    public static final String PARTITION_COLUMN = "_sluice_partition";
    public static final String OFFSET_COLUMN = "_sluice_offset";
    /** Stream entry columns: when the table has both, the stream strategies fill them and skip redelivered rows already landed. */
    public static final String ENTRY_COLUMN = "_sluice_entry";
    public static final String INDEX_COLUMN = "_sluice_index";

    private final String table;
    private final String version;
    private final Set<String> settings;
    private final Map<String, String> columns;
    /** Columns an INSERT may name (not MATERIALIZED nor ALIAS), in table order, with their types. */
    private final Map<String, String> insertable;
    private final String engine;
    private final String engineFull;

    private ClickHouseTarget(String table, String version, Set<String> settings, Map<String, String> columns,
                             Map<String, String> insertable, String engine, String engineFull) {
        this.table = table;
        this.version = version;
        this.settings = settings;
        this.columns = columns;
        this.insertable = insertable;
        this.engine = engine;
        this.engineFull = engineFull;
    }

    /** For tests of the mode selection: a target as a server of {@code version} would describe it. */
    public static ClickHouseTarget describe(String table, String version, Set<String> settings, Map<String, String> columns,
                                            String engine, String engineFull) {
        return new ClickHouseTarget(table, version, settings, columns, columns, engine, engineFull);
    }

    /**
     * Creates the table from {@link IngestConfig#tableDdl()} when given, then checks that it exists and has the
     * encoder's columns.
     *
     * @throws InvalidConfigException naming the table and what is missing
     * @throws IngestException        if ClickHouse cannot be reached
     */
    public static ClickHouseTarget open(IngestConfig config, ClickHouseHttp http) {
        String version = http.query("SELECT version() FORMAT TabSeparated").strip();
        Set<String> settings = new HashSet<>(lines(http.query("SELECT name FROM system.settings FORMAT TabSeparated")));
        if (config.tableDdl() != null && !config.tableDdl().isBlank()) {
            http.query("CREATE DATABASE IF NOT EXISTS " + config.database());
            http.query(config.tableDdl());
        }
        Map<String, String> columns = columnsOf(http, config.database(), config.tableName());
        if (columns.isEmpty()) {
            throw InvalidConfigException.of("table", config.table(), "does not exist on ClickHouse " + version + " at "
                    + http.url() + " (create it, or give table.ddl)");
        }
        if (config.rowEncoder() != null) {
            List<String> missing = new ArrayList<>();
            for (String c : config.rowEncoder().columns()) {
                if (!columns.containsKey(c)) {
                    missing.add(c);
                }
            }
            if (!missing.isEmpty()) {
                throw InvalidConfigException.of("table", config.table(), "lacks the columns " + missing
                        + " that row.encoder " + config.rowEncoder().getClass().getName() + " writes; it has " + columns);
            }
        }
        Map<String, String> insertable = new LinkedHashMap<>();
        for (String line : lines(http.query("SELECT name, type, default_kind FROM system.columns WHERE database = '"
                + config.database() + "' AND table = '" + config.tableName() + "' FORMAT TabSeparated"))) {
            String[] f = line.split("\t", -1);
            if (!f[2].equals("MATERIALIZED") && !f[2].equals("ALIAS")) {
                insertable.put(f[0], f[1]);
            }
        }
        String engine = "";
        String engineFull = "";
        for (String line : lines(http.query("SELECT engine, engine_full FROM system.tables WHERE database = '"
                + config.database() + "' AND name = '" + config.tableName() + "' FORMAT TabSeparated"))) {
            String[] f = line.split("\t", -1);
            engine = f[0];
            engineFull = f.length > 1 ? f[1] : "";
        }
        LOG.info("ClickHouse {} at {}: table {} ({}) with columns {}", version, http.url(), config.table(), engine, columns.keySet());
        return new ClickHouseTarget(config.table(), version, settings, columns, insertable, engine, engineFull);
    }

    static Map<String, String> columnsOf(ClickHouseHttp http, String db, String table) {
        Map<String, String> columns = new LinkedHashMap<>();
        for (String line : lines(http.query("SELECT name, type FROM system.columns WHERE database = '" + db
                + "' AND table = '" + table + "' FORMAT TabSeparated"))) {
            int tab = line.indexOf('\t');
            columns.put(line.substring(0, tab), line.substring(tab + 1));
        }
        return columns;
    }

    static List<String> lines(String body) {
        List<String> out = new ArrayList<>();
        for (String l : body.split("\n")) {
            if (!l.isEmpty()) {
                out.add(l);
            }
        }
        return out;
    }

    public String table() {
        return table;
    }

    public String version() {
        return version;
    }

    /** Major.minor as one comparable number, e.g. 18.16 → 1816, 23.8 → 2308. */
    public int versionNumber() {
        String[] p = version.split("\\.");
        return Integer.parseInt(p[0]) * 100 + (p.length > 1 ? Integer.parseInt(p[1]) : 0);
    }

    public boolean supportsSetting(String name) {
        return settings.contains(name);
    }

    public boolean hasColumn(String name) {
        return columns.containsKey(name);
    }

    /** True when the table carries the stream entry columns. */
    public boolean hasEntryColumns() {
        return hasColumn(ENTRY_COLUMN) && hasColumn(INDEX_COLUMN);
    }

    /** Columns an INSERT may name (not MATERIALIZED nor ALIAS), in table order → type. */
    public Map<String, String> insertableColumns() {
        return insertable;
    }

    /** The column's type, or null. */
    public String columnType(String name) {
        return columns.get(name);
    }

    public String engine() {
        return engine;
    }

    /** {@code Replicated*MergeTree}: the server drops a block identical to one of the last inserted ones (ZooKeeper). */
    public boolean isReplicated() {
        return engine.startsWith("Replicated");
    }

    /**
     * True when the table drops a retried insert: Replicated*MergeTree (identical blocks, any version) or a
     * MergeTree with {@code non_replicated_deduplication_window > 0} (21.x+).
     */
    public boolean deduplicatesInserts() {
        if (isReplicated()) {
            return true;
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("non_replicated_deduplication_window\\s*=\\s*(\\d+)")
                .matcher(engineFull);
        return m.find() && Long.parseLong(m.group(1)) > 0;
    }

    /** True when the table carries the offset columns. */
    public boolean hasOffsetColumns() {
        return hasColumn(PARTITION_COLUMN) && hasColumn(OFFSET_COLUMN);
    }
}
