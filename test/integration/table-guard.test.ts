import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { asFunction, guardTable } from '../../local/table-guard.js';
import { createTestTable } from '../support/engines.js';

/**
 * The local stand-in for the functions' IAM roles (shared/api/table-access.ts), on DynamoDB Local through the real
 * document client: what a function's role would refuse on AWS is refused here with the same error name, so the
 * end-to-end suite, which runs every function inside its grant, proves the grants suffice.
 */
describe('the local table guard', () => {
  it("refuses what a function's grant does not allow, and lets through what it does", async () => {
    const table = await createTestTable('guard');
    guardTable(table.doc as never);
    const put = (pk: string) =>
      new PutCommand({ TableName: table.tableName, Item: { PK: pk, SK: 'X', entity: 'probe' } });
    const get = (pk: string) => new GetCommand({ TableName: table.tableName, Key: { PK: pk, SK: 'X' } });
    const denied = { name: 'AccessDeniedException' };

    // Outside any function (the admin CLI, a test's setup): not checked.
    await table.doc.send(put('TOKEN#abc'));
    // The docs function has no table at all.
    await expect(asFunction('docs', () => table.doc.send(get('ORG#org_1')))).rejects.toMatchObject(denied);
    // Every authenticated function reads token items; only admin writes them.
    expect((await asFunction('employees', () => table.doc.send(get('TOKEN#abc')))).Item).toMatchObject({
      PK: 'TOKEN#abc',
    });
    await expect(asFunction('employees', () => table.doc.send(put('TOKEN#forged')))).rejects.toMatchObject(denied);
    await asFunction('admin', () => table.doc.send(put('TOKEN#new')));
    // A transaction is authorized per contained action: one item outside the grant refuses the whole.
    await expect(
      asFunction('webhooks', () =>
        table.doc.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: table.tableName, Item: { PK: 'ORG#org_1', SK: 'A' } } },
              { Put: { TableName: table.tableName, Item: { PK: 'STUB#stub_1', SK: 'STUB' } } },
            ],
          }),
        ),
      ),
    ).rejects.toMatchObject(denied);
    // Index queries: only the indexes the function names.
    const byIndex = (index: string) =>
      new QueryCommand({
        TableName: table.tableName,
        IndexName: index,
        KeyConditionExpression: `${index}PK = :pk`,
        ExpressionAttributeValues: { ':pk': 'x' },
      });
    await asFunction('paystubs', () => table.doc.send(byIndex('GSI2')));
    await expect(asFunction('processor', () => table.doc.send(byIndex('GSI2')))).rejects.toMatchObject(denied);
    // A base-table query is checked on its partition key value.
    const byPartition = (pk: string) =>
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': pk },
      });
    await asFunction('employees', () => table.doc.send(byPartition('ORG#org_1')));
    await expect(asFunction('employees', () => table.doc.send(byPartition('STUB#stub_1')))).rejects.toMatchObject(
      denied,
    );
    // The audit ingester writes lines and burst counts, and reads nothing.
    await expect(asFunction('audit-ingest', () => table.doc.send(get('ORG#org_1')))).rejects.toMatchObject(denied);
  });
});
