"""The metadata audit pipeline on Spark: a ``kraft-metadata`` data source and the audit jobs.

* :mod:`~kafka_admin_kraft.pipeline.storage` reads local files and URIs (S3, GCS, HDFS),
* :mod:`~kafka_admin_kraft.pipeline.planning` finds log directories and cuts files into splits,
* :mod:`~kafka_admin_kraft.pipeline.walk` walks a split's batches and finds damage, with
  :mod:`~kafka_admin_kraft.pipeline.runs` framing runs of ordinary batches together,
* :mod:`~kafka_admin_kraft.pipeline.columnar` turns them into Arrow columns, decoding what a query
  needs (:mod:`~kafka_admin_kraft.pipeline.schema` lists the columns),
* :mod:`~kafka_admin_kraft.pipeline.source` is the Spark data source
  (``spark.read.format("kraft-metadata")``),
* :mod:`~kafka_admin_kraft.pipeline.rules` is how committed and truncated records are told apart,
* :mod:`~kafka_admin_kraft.pipeline.audit` runs the jobs and writes the Parquet tables,
  :mod:`~kafka_admin_kraft.pipeline.tables` building those it makes on the driver from the
  steps' findings (:mod:`~kafka_admin_kraft.pipeline.findings`),
* :mod:`~kafka_admin_kraft.pipeline.report` writes the Markdown or HTML report and its SVG timeline,
* :mod:`~kafka_admin_kraft.pipeline.session` starts Spark (Java check, worker Python, master).

Only ``source``, ``audit`` (inside its functions) and ``session`` import PySpark; importing this
package does not.
"""
