/*
 * HAADE's launcher for Apache Iceberg's REST catalog test server (RESTCatalogServer, from the
 * test-fixtures jar of org.apache.iceberg:iceberg-open-api). It does what
 * RESTCatalogServer.main does, with two differences:
 *
 *  - it binds to one address (REST_HOST, default 127.0.0.1): RESTCatalogServer calls
 *    `new Server(port)`, which listens on every interface, and has no option for the host;
 *  - it builds the backend catalog without a Hadoop Configuration, so Hadoop need not be on the
 *    class path (set CATALOG_IO__IMPL, e.g. org.apache.iceberg.aws.s3.S3FileIO).
 *
 * The catalog is configured exactly as the fixture's: every CATALOG_* environment variable
 * becomes a catalog property (CATALOG_IO__IMPL -> io-impl, CATALOG_S3_ENDPOINT -> s3.endpoint),
 * through the fixture's own RCKUtils, and served by the fixture's RESTServerCatalogAdapter and
 * core's RESTCatalogServlet. It sits in the fixture's package because those are package-private.
 *
 *   REST_HOST  address to bind (default 127.0.0.1)
 *   REST_PORT  port (default 8181)
 */
package org.apache.iceberg.rest;

import java.util.Map;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.relocated.com.google.common.collect.Maps;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.gzip.GzipHandler;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;

public class LoopbackRESTCatalogServer {
  public static void main(String[] args) throws Exception {
    String host = System.getenv().getOrDefault("REST_HOST", "127.0.0.1");
    int port = Integer.parseInt(System.getenv().getOrDefault("REST_PORT", "8181"));

    Map<String, String> props = Maps.newHashMap(RCKUtils.environmentCatalogConfig());
    props.putIfAbsent(CatalogProperties.CATALOG_IMPL, JdbcCatalog.class.getName());
    props.putIfAbsent(CatalogProperties.URI, "jdbc:sqlite::memory:");
    props.putIfAbsent("jdbc.schema-version", "V1");
    if (props.get(CatalogProperties.WAREHOUSE_LOCATION) == null) {
      throw new IllegalArgumentException("set CATALOG_WAREHOUSE");
    }
    String name = props.getOrDefault(RESTCatalogServer.CATALOG_NAME, "rest_backend");
    Map<String, String> shown = Maps.newHashMap(props);
    shown.replaceAll((k, v) -> k.contains("secret") || k.contains("password") ? "***" : v);
    System.out.println("creating catalog " + name + " with properties " + shown);
    Catalog catalog = CatalogUtil.buildIcebergCatalog(name, props, null);

    RESTCatalogAdapter adapter =
        new RESTServerCatalogAdapter(new RESTCatalogServer.CatalogContext(catalog, props));
    ServletContextHandler context = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    context.addServlet(new ServletHolder(new RESTCatalogServlet(adapter)), "/*");
    context.insertHandler(new GzipHandler());

    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost(host);
    connector.setPort(port);
    server.addConnector(connector);
    server.setHandler(context);
    server.setStopAtShutdown(true);
    server.start();
    System.out.println("REST catalog listening on http://" + host + ":" + port + "/");
    server.join();
  }
}
