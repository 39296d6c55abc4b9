import { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { ObjectStore } from '../../shared/adapters/object-store.js';

/** The S3 client is made on first use (shared/adapters/object-store.ts); these check how, without a bucket. */
describe('ObjectStore client', () => {
  it('makes the client once, from the S3 module it loads, and hands the same one to every caller', async () => {
    let made = 0;
    const store = new ObjectStore((sdk) => {
      made++;
      return new sdk.S3Client({ region: 'us-east-1' });
    }, 'bucket');
    const [a, b] = await Promise.all([store.client(), store.client()]);
    expect(a).toBe(b);
    expect(await store.client()).toBe(a);
    expect(a).toBeInstanceOf(S3Client);
    expect(made).toBe(1);
  });

  it('forgets a failed attempt: the next call tries again, and a concurrent caller never loses a newer client', async () => {
    let calls = 0;
    const store = new ObjectStore((sdk) => {
      if (++calls === 1) throw new Error('no client this time');
      return new sdk.S3Client({ region: 'us-east-1' });
    }, 'bucket');
    const first = store.client();
    await expect(first).rejects.toThrow('no client this time');
    const second = store.client();
    // A late caller of the failed attempt must not clear the new one.
    await first.catch(() => undefined);
    const client = await second;
    expect(await store.client()).toBe(client);
    expect(calls).toBe(2);
  });

  it('uses a client it is given as it is', async () => {
    const given = new S3Client({ region: 'us-east-1' });
    expect(await new ObjectStore(given, 'bucket').client()).toBe(given);
  });
});
