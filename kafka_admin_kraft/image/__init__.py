"""Metadata images: load the image of a KRaft metadata log (a snapshot, a segment or a whole
``__cluster_metadata-0`` directory, at its end or at an offset), walk it as Kafka's metadata shell
does, and diff two of them.

* :mod:`~kafka_admin_kraft.image.model`: the image and its values, with Kafka's text of each;
* :mod:`~kafka_admin_kraft.image.replay`: how records change it (Kafka's ``MetadataDelta`` rules);
* :mod:`~kafka_admin_kraft.image.changes`: PartitionChangeRecords from their bytes, runs of them summed;
* :mod:`~kafka_admin_kraft.image.frames`: reading batches, the ordinary ones framed without records;
* :mod:`~kafka_admin_kraft.image.source`: reading files and directories, live ones included;
* :mod:`~kafka_admin_kraft.image.nodes`: the shell's tree (``/image/...``, ``/local/...``);
* :mod:`~kafka_admin_kraft.image.diff`: the difference of two images, by area;
* :mod:`~kafka_admin_kraft.image.text`: Java's text forms the shell prints.

    from kafka_admin_kraft.image import diff_images, load_image
    before = load_image("/var/kafka/__cluster_metadata-0", offset=1000)
    after = load_image("/var/kafka/__cluster_metadata-0")
    print(diff_images(before, after).text())
"""

from kafka_admin_kraft.image.diff import AREAS, Change, ImageDiff, diff_images
from kafka_admin_kraft.image.model import MetadataImage, Provenance
from kafka_admin_kraft.image.nodes import Node, image_node, lookup, root_node, walk
from kafka_admin_kraft.image.source import ImageError, load_image, load_images

__all__ = ["AREAS", "Change", "ImageDiff", "ImageError", "MetadataImage", "Node", "Provenance", "diff_images",
           "image_node", "load_image", "load_images", "lookup", "root_node", "walk"]
