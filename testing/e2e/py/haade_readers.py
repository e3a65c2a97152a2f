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


def catalog_conf() -> dict:
    """Spark's settings for Iceberg's JdbcCatalog `local` on the tier's PostgreSQL and MinIO."""
    return {
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.local": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.local.type": "jdbc",
        "spark.sql.catalog.local.uri": f"jdbc:postgresql://{PG}/lakehouse",
        "spark.sql.catalog.local.jdbc.user": "haade",
        "spark.sql.catalog.local.jdbc.password": "haade",
        # the catalog layout iceberg-go's SQL catalog writes (with iceberg_type)
        "spark.sql.catalog.local.jdbc.schema-version": "V1",
        "spark.sql.catalog.local.warehouse": WAREHOUSE,
        "spark.sql.catalog.local.io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        "spark.sql.catalog.local.s3.endpoint": S3,
        "spark.sql.catalog.local.s3.path-style-access": "true",
        "spark.sql.catalog.local.client.region": os.environ.get("AWS_REGION", "us-east-1"),
    }


def spark_session(jars: str, app: str = "haade-e2e", cores: int = 2, conf: dict = None):
    """A local Spark session on 127.0.0.1 with the catalog `local`. The defaults suit a short-lived
    reader; conf overrides or adds settings."""
    from pyspark.sql import SparkSession

    settings = {
        "spark.jars": jars,
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(cores),
        "spark.driver.memory": "1g",
        # A short-lived driver on 2 shared cores: the C1 compiler alone warms up much faster.
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseParallelGC",
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        **catalog_conf(),
        **(conf or {}),
    }
    b = SparkSession.builder.master(f"local[{cores}]").appName(app)
    for k, v in settings.items():
        if v is not None:
            b = b.config(k, v)
    spark = b.getOrCreate()
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
