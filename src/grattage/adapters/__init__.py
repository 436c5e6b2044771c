"""Layer 4: the database (SQLAlchemy Core tables, repositories, migrations) and the key store."""
