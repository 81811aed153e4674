package io.sluice.net.server.internal;

import io.netty.buffer.ByteBuf;
import io.sluice.core.Broker;
import io.sluice.core.ConsumerGroups;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicDescription;
import io.sluice.core.TopicPartition;
import io.sluice.core.GroupAdmin;
import io.sluice.core.GroupStatus;
import io.sluice.core.OffsetResetPlan;
import io.sluice.net.protocol.Admin;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.ApiVersions;
import io.sluice.net.protocol.Authenticate;
import io.sluice.net.protocol.CreateTopic;
import io.sluice.net.protocol.Fetch;
import io.sluice.net.protocol.Groups;
import io.sluice.net.protocol.ListOffsets;
import io.sluice.net.protocol.Metadata;
import io.sluice.net.protocol.OffsetCommit;
import io.sluice.net.protocol.OffsetFetch;
import io.sluice.net.protocol.Produce;
import io.sluice.net.protocol.Wire;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Decodes each request body and runs it against the core broker. Produce and fetch run on the event loop (they never
 * block); calls that may touch files run off it behind a barrier, so the next request on the connection starts only
 * after them (a pipelined create-topic followed by a produce works): topic administration on the admin thread, group
 * calls and offsets on the groups thread, so heartbeats never wait behind a topic creation.
 */
final class Requests {
    static final String SERVER_VERSION = "sluice-0.1.0";

    private Requests() {
    }

    static void dispatch(RequestHandler conn, ApiKey api, short version, long seq, int cid, ByteBuf body) {
        Broker broker = conn.server.broker;
        switch (api) {
            case API_VERSIONS -> conn.succeed(seq, cid, ApiVersions.Response.current(SERVER_VERSION)::encode);
            case AUTHENTICATE -> {
                Authenticate.Request r = Authenticate.Request.decode(body);
                boolean ok = !conn.server.authRequired() || conn.server.tokenMatches(r.token());
                conn.authenticated(ok, seq);
                if (ok) {
                    conn.succeed(seq, cid, out -> { });
                } else {
                    conn.fail(seq, cid, SluiceException.Code.AUTHENTICATION_FAILED, "invalid token");
                }
            }
            // the batch is checked whole (framing, CRC32C, every record against maxEventSize) before anything is stored
            case PRODUCE -> new ProduceBatchOperation(conn, seq, cid,
                    Produce.BatchRequest.decode(body, conn.batchChecker(), broker.config().maxEventSize())).start(body);
            case FETCH -> new FetchOperation(conn, seq, cid, clampFetch(conn, Fetch.Request.decode(body))).run();
            case LIST_OFFSETS -> {
                ListOffsets.Request r = ListOffsets.Request.decode(body, version);
                if (r.searchesTimestamps()) {
                    // a timestamp is a binary search over the journal (it opens a tailer and reads stored batches):
                    // off the event loop, like RESET_OFFSETS' to-datetime
                    onAdminThread(conn, seq, cid, () -> {
                        ListOffsets.Response response = listOffsets(broker, r);
                        return out -> response.encode(out, version);
                    });
                } else {
                    ListOffsets.Response response = listOffsets(broker, r);
                    conn.succeed(seq, cid, out -> response.encode(out, version));
                }
            }
            case METADATA -> {
                Metadata.Request r = Metadata.Request.decode(body);
                onAdminThread(conn, seq, cid, () -> metadata(broker, r)::encode);
            }
            case CREATE_TOPIC -> {
                CreateTopic.Request r = CreateTopic.Request.decode(body);
                onAdminThread(conn, seq, cid, () -> {
                    TopicDescription d = r.ifAbsent() ? broker.createTopicIfAbsent(r.config()) : broker.createTopic(r.config());
                    return new CreateTopic.Response(d)::encode;
                });
            }
            case OFFSET_COMMIT -> {
                OffsetCommit.Request r = OffsetCommit.Request.decode(body);
                onGroupsThread(conn, seq, cid, () -> {
                    broker.groups().commit(r.groupId(), r.memberId(), r.generation(), r.offsets());
                    return out -> { };
                });
            }
            case OFFSET_FETCH -> {
                OffsetFetch.Request r = OffsetFetch.Request.decode(body);
                onGroupsThread(conn, seq, cid, () -> {
                    Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
                    for (TopicPartition tp : r.partitions()) {
                        OptionalLong committed = broker.groups().committed(r.groupId(), r.memberId(), r.generation(), tp);
                        offsets.put(tp, committed.isPresent() ? committed.getAsLong() : OffsetFetch.NO_OFFSET);
                    }
                    return new OffsetFetch.Response(offsets)::encode;
                });
            }
            case JOIN_GROUP -> {
                Groups.JoinRequest r = Groups.JoinRequest.decode(body);
                onGroupsThread(conn, seq, cid, () -> {
                    ConsumerGroups.Membership m = broker.groups().join(r.groupId(), r.topic(), r.memberId(), r.generation(),
                            r.clientId(), r.sessionTimeoutMillis());
                    return out -> Groups.writeMembership(out, m);
                });
            }
            case HEARTBEAT -> {
                Groups.HeartbeatRequest r = Groups.HeartbeatRequest.decode(body);
                onGroupsThread(conn, seq, cid, () -> {
                    ConsumerGroups.Membership m = broker.groups().heartbeat(r.groupId(), r.memberId(), r.generation());
                    return out -> Groups.writeMembership(out, m);
                });
            }
            case LIST_GROUPS -> {
                Wire.expectEnd(body, "list groups request");
                onAdminThread(conn, seq, cid, () -> {
                    List<String> groups = new GroupAdmin(broker).list();
                    return out -> Admin.writeGroupList(out, groups);
                });
            }
            case DESCRIBE_GROUP -> {
                String groupId = Wire.readRequiredString(body, "groupId");
                Wire.expectEnd(body, "describe group request");
                onAdminThread(conn, seq, cid, () -> {
                    GroupStatus status = new GroupAdmin(broker).describe(groupId);
                    return out -> Admin.writeGroupStatus(out, status, version);
                });
            }
            case RESET_OFFSETS -> {
                Admin.ResetRequest r = Admin.ResetRequest.decode(body);
                onAdminThread(conn, seq, cid, () -> {
                    OffsetResetPlan plan = new GroupAdmin(broker).resetOffsets(r.groupId(), r.topic(), r.spec(), r.execute());
                    return out -> Admin.writeResetPlan(out, plan);
                });
            }
            case DELETE_TOPIC -> {
                String topic = Admin.readTopicName(body);
                onAdminThread(conn, seq, cid, () -> {
                    broker.deleteTopic(topic);
                    return out -> { };
                });
            }
            case ALTER_TOPIC -> {
                Admin.AlterRequest r = Admin.AlterRequest.decode(body);
                onAdminThread(conn, seq, cid, () -> {
                    TopicDescription d = broker.alterTopic(r.topic(), r.retentionMillis(), r.retentionBytes());
                    return out -> Metadata.writeDescription(out, d);
                });
            }
            case LEAVE_GROUP -> {
                Groups.MemberRequest r = Groups.MemberRequest.decode(body);
                onGroupsThread(conn, seq, cid, () -> {
                    broker.groups().leave(r.groupId(), r.memberId());
                    return out -> { };
                });
            }
        }
    }

    /** The server's caps win over the client's wishes: long-poll wait and response bytes. */
    private static Fetch.Request clampFetch(RequestHandler conn, Fetch.Request r) {
        int waitCap = conn.server.config.maxFetchWaitMillis();
        int bytesCap = conn.server.config.maxFetchBytes();
        boolean partitionsWithin = r.partitions().stream().allMatch(p -> p.maxBytes() <= bytesCap);
        if (r.maxWaitMillis() <= waitCap && r.maxBytes() <= bytesCap && partitionsWithin) {
            return r;
        }
        List<Fetch.PartitionRequest> partitions = partitionsWithin ? r.partitions() : r.partitions().stream()
                .map(p -> new Fetch.PartitionRequest(p.partition(), p.offset(), Math.min(p.maxBytes(), bytesCap)))
                .toList();
        return new Fetch.Request(Math.min(r.maxWaitMillis(), waitCap), Math.min(r.maxBytes(), bytesCap), partitions);
    }

    /**
     * Start and end offsets of the requested partitions (every partition for an empty list) and, for a partition
     * with a timestamp, {@link Broker#offsetForTimestamp}: the first offset at or after it, the end offset if none.
     */
    private static ListOffsets.Response listOffsets(Broker broker, ListOffsets.Request r) {
        List<ListOffsets.PartitionQuery> partitions = r.partitions();
        if (partitions.isEmpty()) {
            partitions = new ArrayList<>();
            for (int p = 0, n = broker.partitionCount(r.topic()); p < n; p++) {
                partitions.add(new ListOffsets.PartitionQuery(p, ListOffsets.NO_TIMESTAMP));
            }
        }
        List<ListOffsets.PartitionOffsets> result = new ArrayList<>(partitions.size());
        for (ListOffsets.PartitionQuery q : partitions) {
            TopicPartition tp = new TopicPartition(r.topic(), q.partition());
            long start = broker.startOffset(tp);
            long end = broker.endOffset(tp);
            result.add(q.hasTimestamp()
                    ? new ListOffsets.PartitionOffsets(q.partition(), start, end, broker.offsetForTimestamp(tp, q.timestamp()))
                    : ListOffsets.PartitionOffsets.range(q.partition(), start, end));
        }
        return new ListOffsets.Response(result);
    }

    private static Metadata.Response metadata(Broker broker, Metadata.Request r) {
        List<String> names = r.topics().isEmpty() ? broker.listTopics() : r.topics();
        List<Metadata.TopicResult> topics = new ArrayList<>(names.size());
        for (String name : names) {
            try {
                topics.add(new Metadata.TopicResult(name, SluiceException.Code.NONE, null, broker.describeTopic(name)));
            } catch (SluiceException e) {
                topics.add(new Metadata.TopicResult(name, e.code(), e.getMessage(), null));
            }
        }
        return new Metadata.Response(topics);
    }

    /**
     * Runs {@code call} on the admin thread; its result writes the response body. Later requests on this connection
     * wait until it finished.
     */
    private static void onAdminThread(RequestHandler conn, long seq, int cid, Supplier<Consumer<ByteBuf>> call) {
        offLoop(conn.server.admin, conn, seq, cid, call);
    }

    /** As {@link #onAdminThread}, on the groups thread (group membership and offsets only: short calls). */
    private static void onGroupsThread(RequestHandler conn, long seq, int cid, Supplier<Consumer<ByteBuf>> call) {
        offLoop(conn.server.groups, conn, seq, cid, call);
    }

    private static void offLoop(java.util.concurrent.Executor executor, RequestHandler conn, long seq, int cid,
                                Supplier<Consumer<ByteBuf>> call) {
        Object barrier = new Object();
        conn.setBarrier(barrier);
        try {
            executor.execute(() -> {
                try {
                    Consumer<ByteBuf> body = call.get();
                    conn.succeed(seq, cid, body);
                } catch (RuntimeException | Error e) {
                    // whatever fails, the request gets an answer (UNKNOWN for the unexpected): never a wedged connection
                    conn.fail(seq, cid, e);
                    if (e instanceof VirtualMachineError fatal) {
                        throw fatal;
                    }
                } finally {
                    conn.ctx().executor().execute(() -> conn.clearBarrier(barrier));
                }
            });
        } catch (RuntimeException rejected) {
            conn.setBarrier(null);
            throw new SluiceException.ClosedException("server is shutting down");
        }
    }
}
