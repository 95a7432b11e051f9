-- A few sorted screenshots for a first launch with an empty library.
INSERT INTO folders (id, name) VALUES (1, 'Receipts'), (2, 'Recipes'), (3, 'Travel');
INSERT INTO results (image_path, label, confidence, sorted_at, folder_id) VALUES
  ('sample/receipt-cafe.png', 'receipt', 0.97, 1700000000, 1),
  ('sample/boarding-pass.png', 'ticket', 0.93, 1700003600, 3),
  ('sample/pancakes.png', 'recipe', 0.88, 1700007200, 2),
  ('sample/museum-map.png', 'map', 0.74, 1700010800, 3);
