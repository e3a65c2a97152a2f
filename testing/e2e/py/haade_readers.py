"""Independent readers for the e2e tier: Spark 3.5 (Iceberg's JdbcCatalog `local`) and pyiceberg
(SqlCatalog `local`), both on the PostgreSQL catalog and MinIO that the Go tests use.

Nothing here imports or calls HAADE's code: these are the engines our tables must work with.
The Go tests run the scripts of this folder with testing/services/python.sh python ...
"""

import base64
import os

PG = os.environ.get("HAADE_E2E_PG", "127.0.0.1:5432")
S3 = os.environ.get("HAADE_E2E_S3", "http://127.0.0.1:9000")
WAREHOUSE = "s3://warehouse/"


def spark_session(jars: str):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("haade-e2e")
        .config("spark.jars", jars)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        # A short-lived driver on 2 shared cores: the C1 compiler alone warms up much faster.
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseParallelGC")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.catalog.local", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.local.type", "jdbc")
        .config("spark.sql.catalog.local.uri", f"jdbc:postgresql://{PG}/lakehouse")
        .config("spark.sql.catalog.local.jdbc.user", "haade")
        .config("spark.sql.catalog.local.jdbc.password", "haade")
        # the catalog layout iceberg-go's SQL catalog writes (with iceberg_type)
        .config("spark.sql.catalog.local.jdbc.schema-version", "V1")
        .config("spark.sql.catalog.local.warehouse", WAREHOUSE)
        .config("spark.sql.catalog.local.io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
        .config("spark.sql.catalog.local.s3.endpoint", S3)
        .config("spark.sql.catalog.local.s3.path-style-access", "true")
        .config("spark.sql.catalog.local.client.region", os.environ.get("AWS_REGION", "us-east-1"))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    return spark


def pyiceberg_catalog():
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog(
        "local",
        uri=f"postgresql+psycopg2://haade:haade@{PG}/lakehouse",
        warehouse=WAREHOUSE,
        **{
            "s3.endpoint": S3,
            "s3.access-key-id": os.environ.get("AWS_ACCESS_KEY_ID", "minioadmin"),
            "s3.secret-access-key": os.environ.get("AWS_SECRET_ACCESS_KEY", "minioadmin"),
            "s3.region": os.environ.get("AWS_REGION", "us-east-1"),
        },
    )


def b64(v):
    return None if v is None else base64.b64encode(bytes(v)).decode("ascii")


def pyiceberg_rest_catalog(uri: str):
    """pyiceberg's RestCatalog `local` on the Iceberg REST catalog at uri (testing/services/rest.sh),
    reading and writing files in MinIO with the same S3 settings as above."""
    from pyiceberg.catalog.rest import RestCatalog

    return RestCatalog(
        "local",
        uri=uri,
        **{
            "s3.endpoint": S3,
            "s3.access-key-id": os.environ.get("AWS_ACCESS_KEY_ID", "minioadmin"),
            "s3.secret-access-key": os.environ.get("AWS_SECRET_ACCESS_KEY", "minioadmin"),
            "s3.region": os.environ.get("AWS_REGION", "us-east-1"),
        },
    )
