package io.haade.connect;

import java.util.Date;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.transforms.Transformation;

/**
 * Puts the wall-clock time at which Kafka Connect handles a record into a field of its
 * schemaless (Map) value, so the Iceberg sink can fill bronze's ingested_at column the way the
 * Go pipeline does. Kafka's stock InsertField can only insert the record's Kafka timestamp.
 *
 * <pre>
 * transforms=ingest
 * transforms.ingest.type=io.haade.connect.InsertIngestTime
 * transforms.ingest.field=ingested_at
 * </pre>
 *
 * Built by testing/services/connect.sh install; not part of HAADE.
 */
public class InsertIngestTime<R extends ConnectRecord<R>> implements Transformation<R> {
  private static final String FIELD = "field";
  private static final ConfigDef CONFIG =
      new ConfigDef()
          .define(FIELD, ConfigDef.Type.STRING, "ingested_at", ConfigDef.Importance.MEDIUM,
              "value field that receives the ingestion time (java.util.Date)");

  private String field = "ingested_at";

  @Override
  public void configure(Map<String, ?> props) {
    Object f = props.get(FIELD);
    if (f != null) {
      field = f.toString();
    }
  }

  @Override
  @SuppressWarnings("unchecked")
  public R apply(R record) {
    Object value = record.value();
    if (value == null) {
      return record; // a tombstone: nothing to stamp
    }
    if (!(value instanceof Map)) {
      throw new DataException("InsertIngestTime handles schemaless (Map) values only, got "
          + value.getClass().getName());
    }
    Map<String, Object> updated = new HashMap<>((Map<String, Object>) value);
    updated.put(field, new Date());
    return record.newRecord(record.topic(), record.kafkaPartition(), record.keySchema(),
        record.key(), null, updated, record.timestamp());
  }

  @Override
  public ConfigDef config() {
    return CONFIG;
  }

  @Override
  public void close() {}
}
