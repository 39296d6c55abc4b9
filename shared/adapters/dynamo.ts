import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { required } from '../config/env.js';

/**
 * Clients are built once per container. The endpoint comes from the SDK's own AWS_ENDPOINT_URL_DYNAMODB
 * variable, which the local stack sets, so the handler code is identical locally and on AWS.
 */
let doc: DynamoDBDocumentClient | undefined;

export function createDocumentClient(client: DynamoDBClient = new DynamoDBClient({ maxAttempts: 5 })): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    unmarshallOptions: { wrapNumbers: false },
  });
}

export function documentClient(): DynamoDBDocumentClient {
  doc ??= createDocumentClient();
  return doc;
}

export interface TableRef {
  doc: DynamoDBDocumentClient;
  tableName: string;
}

export function defaultTable(): TableRef {
  return { doc: documentClient(), tableName: required('TABLE_NAME') };
}
