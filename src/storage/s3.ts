import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  assertStorageKey,
  DEFAULT_CONTENT_TYPE,
  type DocumentStorage,
  IMMUTABLE_CACHE_CONTROL,
  joinPublicUrl,
} from './types.ts';

export interface S3StorageOptions {
  bucket: string;
  /** S3-compatible endpoint (MinIO, R2, s3rver…); AWS when absent. */
  endpoint?: string;
  region: string;
  /** Static credentials; the SDK's default provider chain (environment, profile, instance role) when absent. */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** `http://host/bucket/key` addressing, needed by most S3-compatible servers. */
  forcePathStyle?: boolean;
  /** Base of the public URLs: the bucket's website/CDN address, e.g. `https://cdn.example.com`. */
  publicBaseUrl: string;
}

export interface S3DocumentStorage extends DocumentStorage {
  /** Closes the client's pooled connections (tests and graceful shutdown). */
  close(): void;
}

/** S3 (or compatible) storage. Objects are written with their content type and an immutable cache policy. */
export function createS3Storage(options: S3StorageOptions): S3DocumentStorage {
  const client = new S3Client({
    region: options.region,
    endpoint: options.endpoint,
    forcePathStyle: options.forcePathStyle ?? false,
    credentials:
      options.accessKeyId && options.secretAccessKey
        ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey }
        : undefined,
    // Checksums only where S3 requires them: several S3-compatible servers reject the newer default headers.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const Bucket = options.bucket;

  return {
    async put(key, body, contentType) {
      assertStorageKey(key);
      await client.send(
        new PutObjectCommand({
          Bucket,
          Key: key,
          Body: body,
          ContentType: contentType || DEFAULT_CONTENT_TYPE,
          ContentLength: body.length,
          CacheControl: IMMUTABLE_CACHE_CONTROL,
        }),
      );
    },

    async get(key) {
      assertStorageKey(key);
      try {
        const res = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        if (!res.Body) return null;
        const body = Buffer.from(await res.Body.transformToByteArray());
        return { body, contentType: res.ContentType || DEFAULT_CONTENT_TYPE };
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
    },

    async delete(key) {
      assertStorageKey(key);
      try {
        await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },

    publicUrl(key, baseUrlOverride) {
      return joinPublicUrl(baseUrlOverride || options.publicBaseUrl, key);
    },

    close() {
      client.destroy();
    },
  };
}

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  if (e?.name === 'NoSuchBucket') return false; // a configuration error, not a missing document
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}
