#!/bin/sh
# One-shot MinIO setup for compose.yaml (the minio-init service): the `hearth` bucket and Hearth's own key,
# allowed on that bucket only (deploy/minio-hearth-policy.json). Safe to run again.
set -eu
mc alias set local http://minio:9000 "$MINIO_ROOT_USER" "$MINIO_ROOT_PASSWORD"
mc mb --ignore-existing local/hearth
mc admin policy create local hearth /hearth-policy.json
mc admin user add local "$HEARTH_S3_ACCESS_KEY_ID" "$HEARTH_S3_SECRET_ACCESS_KEY"
if ! mc admin policy entities local --user "$HEARTH_S3_ACCESS_KEY_ID" | grep -qw hearth; then
  mc admin policy attach local hearth --user "$HEARTH_S3_ACCESS_KEY_ID"
fi
echo "minio-init: bucket hearth ready for $HEARTH_S3_ACCESS_KEY_ID"
